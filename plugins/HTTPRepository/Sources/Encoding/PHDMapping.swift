import FoundationEssentials
import HealthModel
import HealthStore
import RemoteSinkKit
import GatewayRuntime

/// Maps the store's changes to the FHIR form of the HL7 Personal Health Device implementation
/// guide (PHD IG STU2, IEEE 11073-10206 ACOM): the `fhir-phd` format, one transaction Bundle
/// per batch. What the guide requires is cited from its source (github.com/HL7/phd,
/// `input/fsh/StructureDefinition.*.fsh` and `input/intro-notes`, `input/pagecontent`).
///
/// - A quantity sample is a PhdNumericObservation: `code` its MDC code (``PHDCoding``, from the
///   one table), plus the R4 vital-signs LOINC code and category for a vital sign;
///   `valueQuantity` in UCUM, in the unit the device sent when it said so.
/// - A blood-pressure correlation is a PhdCompoundNumericObservation: MDC_PRESS_BLD_NONINV
///   (150020) and LOINC 85354-9, its components systolic (150021, 8480-6), diastolic (150022,
///   8462-4) and, when the reading has it, the mean (150023).
/// - A generic observation whose value is not a measurement (``MDCValueKind``): an MDC code is
///   a PhdCodedEnumerationObservation (`valueCodeableConcept`), a string a PhdStringObservation
///   (`valueString`), a TLV-encoded observation's attributes a PhdCompoundObservation with a
///   component each; state bits go as a number (PhdNumericObservation).
/// - A closed quantity series whose quantities fill a regular grid (``SampledDataGrid``: an
///   ECG lead, a sample array) is a PhdRtsaObservation with `valueSampledData` (factor 1,
///   origin 0). A series with a grid point no quantity took is sent as its quantities, each a
///   PhdNumericObservation tagged with the series, as the `expand` form sends every series: the
///   guide's SampledData has no `E` ("The special values E, L and U are not used",
///   StructureDefinition.PhdRtsaObservation.fsh). A series still open is not sent: a PHD
///   Observation is created once and never updated.
/// - Every Observation has the `phd` category, `subject`, `effectiveDateTime` or
///   `effectivePeriod`, its measurement status (``PHDMeasurementStatus``), its supplemental
///   types as components, `device` (the PhdDevice) and the gatewayDevice extension (the
///   PhgDevice), both created in the same Bundle (``PHDDeviceMapping``).
/// - Each Observation is created conditionally (`POST Observation`, `ifNoneExist`) unless the
///   server holds one with either of its identifiers: the guide's (``PHDObservationIdentifier``,
///   when the reading has a device time stamp and the device an address), which another
///   gateway uploading the same reading gives it too, and healthgate's own, the uuid as a URN,
///   which every Observation carries. A resend creates nothing twice, nor does a series stored
///   again in place (given to another person later: the server keeps the first).
/// - A deletion is a conditional delete by that uuid identifier (R4 §3.1.0.7.1), and for a
///   series also of the Observations tagged with it.
///
/// Heartbeat series and workouts have no form here (as in `fhir-r4`). A record of a type the
/// MDC table has no code for, or without a device to name, is not sent: it is reported in
/// ``Encoded/leftOut``. Pure: the same changes give the same Bundle.
enum PHDMapping {
    /// A record the form leaves out, by its type and the reason.
    struct LeftOut: Hashable, Sendable, CustomStringConvertible {
        enum Reason: String, Sendable {
            case noCode = "the MDC table has no IEEE 11073-10101 code for its type"
            case noDevice = "it names no device (a PHD Observation requires one)"
            case noUnit = "the MDC table has no unit for its type"
            case correlation = "the guide has no form for this correlation"
            case noType = "the device sent no observation type (a PHD Observation is coded by it)"

            /// Why a record of `type` has no code: the device sent none (the generic type of an
            /// untyped observation, ``HealthModel/MDCNomenclature/untypedObservation``), or the
            /// table has none for its type.
            static func withoutCode(_ type: QuantityType) -> Reason {
                MDCNomenclature.genericCodes(type.identifier)?.observation == MDCNomenclature.untypedObservation ? .noType : .noCode
            }
        }

        var type: String
        var reason: Reason

        var description: String { "\(type): \(reason.rawValue)" }
    }

    /// A batch's Bundle (nil when it has no entry) and the records it leaves out.
    struct Encoded {
        var bundle: JSONValue?
        var leftOut: [LeftOut]
    }

    /// The uuid identifier's system: every Observation carries its uuid as a URN, what a
    /// deletion finds it by.
    static let uuidIdentifierSystem = "urn:ietf:rfc:3986"

    /// The Bundle of `changes`: the Devices they name first (the gateways, then the devices, in
    /// the order they appear), then an entry per Observation and deletion in the changes' order.
    /// - Parameters:
    ///   - form: `series` sends a regular closed series as one sampled-data Observation,
    ///     `expand` each of its quantities.
    ///   - gateway: the gateway's name, for records that do not carry the gateway they came by.
    ///   - facts: what this gateway knows of itself, for its PhgDevice (not another gateway's).
    ///   - subject: the `Patient/<id>` of a record (the caller sends no record without one).
    static func encode(
        _ changes: [FollowedChange], form: QuantitySeriesForm, gateway: String, facts: PHDGatewayFacts,
        subject: (HealthRecord) -> String?
    ) -> Encoded {
        var builder = BundleBuilder(gateway: gateway, facts: facts)
        for change in changes {
            switch change {
            case .deleted(let deletion):
                builder.observations += deletions(deletion)
            case .stored(let record, _):
                guard let patient = subject(record) else { continue }
                builder.add(record, patient: patient, form: form)
            }
        }
        return Encoded(bundle: builder.bundle, leftOut: builder.leftOut)
    }

    /// The deletion entries of `deletion`: the Observation with the uuid identifier, and for a
    /// series the Observations of its quantities, which carry its tag.
    static func deletions(_ deletion: StoreChanges.Deletion) -> [JSONValue] {
        func delete(_ url: String) -> JSONValue {
            .object(["request": .object(["method": .string("DELETE"), "url": .string(url)])])
        }
        let byIdentifier = delete("Observation?" + identifierSearch(system: uuidIdentifierSystem, value: uuidURN(deletion.id)))
        switch deletion.kind {
        case .quantity, .correlation:
            return [byIdentifier]
        case .quantitySeries:
            return [
                byIdentifier,
                delete("Observation?_tag=" + searchValue(FHIRMapping.seriesTagSystem) + "|" + FHIRMapping.resourceID(deletion.id)),
            ]
        case .heartbeatSeries, .workout:
            return []
        }
    }

    /// `urn:uuid:<uuid>`, lower case (FHIR's uuid form).
    static func uuidURN(_ id: SampleID) -> String { id.uuidString(after: "urn:uuid:") }

    /// A token search for an identifier, `identifier=<system>|<value>`, each part percent-encoded
    /// where a query needs it (a `+` of a time stamp's offset would otherwise read as a space).
    static func identifierSearch(system: String, value: String) -> String {
        identifierSearch([(system, value)])
    }

    /// A token search for any of `identifiers`: `identifier=<system>|<value>,<system>|<value>`
    /// (R4 search: values separated by commas are alternatives). No value here has a comma.
    static func identifierSearch(_ identifiers: [(system: String, value: String)]) -> String {
        "identifier=" + identifiers.map { searchValue($0.system) + "|" + searchValue($0.value) }.joined(separator: ",")
    }

    /// `text` with every byte but RFC 3986's unreserved characters, `:` and `/` percent-encoded.
    static func searchValue(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                encoded += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return encoded
    }
}

/// Collects one Bundle's entries: the Devices and Coincident Time Stamps (each once) and the
/// Observations.
private struct BundleBuilder {
    let gateway: String
    let facts: PHDGatewayFacts
    var devices: [PHDDeviceMapping.Entry] = []
    var gateways: [PHDDeviceMapping.Entry] = []
    var observations: [JSONValue] = []
    var leftOut: [PHDMapping.LeftOut] = []
    /// The guide identifiers the Bundle's Observations carry.
    var guideIdentifiers: Set<String> = []
    /// The Coincident Time Stamp Observations, each once, in the order first referred to.
    var coincidentTimeStamps: [(fullUrl: String, entry: JSONValue)] = []

    init(gateway: String, facts: PHDGatewayFacts) {
        self.gateway = gateway
        self.facts = facts
    }

    var bundle: JSONValue? {
        let entries = gateways.map(\.bundleEntry) + devices.map(\.bundleEntry) + coincidentTimeStamps.map(\.entry) + observations
        guard !observations.isEmpty else { return nil }
        return .object(["resourceType": .string("Bundle"), "type": .string("transaction"), "entry": .array(entries)])
    }

    /// The Observations of `record`.
    mutating func add(_ record: HealthRecord, patient: String, form: QuantitySeriesForm) {
        switch record {
        case .quantity(let sample):
            switch sample.metadata.mdcValueKind {
            // A code is a whole number; any other value (written by hand, not by a source) goes as a number.
            case .code? where UInt32(exactly: sample.quantity.value) != nil: add(coded: sample, patient: patient)
            case .text?: add(string: sample, patient: patient)
            case .attributes?: add(attributes: sample, patient: patient)
            case .code?, .bits?, nil: add(numeric: sample, patient: patient)
            }
        case .correlation(let correlation):
            guard correlation.type == .bloodPressure else {
                return leftOut.append(.init(type: correlation.type.identifier, reason: .correlation))
            }
            add(bloodPressure: correlation, patient: patient)
        case .quantitySeries(let series):
            // The caller passes no open series; the check keeps an open one from being created
            // in a version the server would keep.
            guard !series.isProvisional else { return }
            let grid = SampledDataGrid(starts: series.quantities.map(\.startDate), from: series.startDate)
            if form == .series, grid.points.last == series.count - 1 {
                add(sampled: series, grid: grid, patient: patient)
            } else {
                // Its quantities' time base is the series': the device stamped its start.
                for sample in series.quantitySamples {
                    add(numeric: sample, patient: patient, timeBase: (series.startDate, series.metadata))
                }
            }
        case .heartbeatSeries, .workout:
            return
        }
    }

    // MARK: Observations

    /// A quantity: a PhdNumericObservation. `timeBase` is the time and metadata the device's
    /// time stamp belongs to, when not the sample's own (a quantity of a series).
    mutating func add(numeric sample: QuantitySample, patient: String, timeBase: (start: Date, metadata: Metadata)? = nil) {
        guard let code = PHDCoding.observationCode(sample.type, metadata: sample.metadata) else {
            return leftOut.append(.init(type: sample.type.identifier, reason: .withoutCode(sample.type)))
        }
        guard let unit = PHDCoding.unit(sample.type, metadata: sample.metadata), let value = unit.value(of: sample.quantity) else {
            return leftOut.append(.init(type: sample.type.identifier, reason: .noUnit))
        }
        guard let devices = devices(of: sample.device, metadata: sample.metadata) else {
            return leftOut.append(.init(type: sample.type.identifier, reason: .noDevice))
        }
        let vital = PHDCoding.vitalSign(code: code, type: sample.type)
        let identifier = guideIdentifier(sample.device, patient: patient, code: code, metadata: sample.metadata)
        let base = timeBase ?? (sample.startDate, sample.metadata)
        var observation = PHDObservation(
            profile: .numeric, id: sample.id, code: code, vital: vital, start: sample.startDate, end: sample.endDate,
            metadata: sample.metadata, guideIdentifier: identifier, patient: patient, devices: devices,
            coincidentTimeStamp: coincidentTimeStamp(start: base.start, metadata: base.metadata, devices: devices))
        if observation.status.dataAbsentReason == nil { observation.fields["valueQuantity"] = unit.quantity(value) }
        observations.append(observation.entry)
    }

    /// A value that is an MDC code (a Generic Health Sensor's simple discrete or discrete event
    /// observation, `healthgate.mdc.valueKind: code`): PhdCodedEnumerationObservation, the code
    /// in `valueCodeableConcept` (its FSH mapping: DiscreteObservation.value).
    mutating func add(coded sample: QuantitySample, patient: String) {
        add(sample, profile: .codedEnumeration, patient: patient) { observation in
            observation.fields["valueCodeableConcept"] = .object(["coding": .array([PHDCoding.coding(UInt32(exactly: sample.quantity.value) ?? 0)])])
        }
    }

    /// A string observation (`healthgate.mdc.valueKind: text`): PhdStringObservation, the text
    /// in `valueString` (its FSH mapping: StringObservation.value).
    mutating func add(string sample: QuantitySample, patient: String) {
        add(sample, profile: .string, patient: patient) { observation in
            if case .string(let text)? = sample.metadata[.mdcText], !text.isEmpty {
                observation.fields["valueString"] = .string(text)
            } else {
                observation.fields["dataAbsentReason"] = PHDCoding.noContent
            }
        }
    }

    /// A TLV-encoded observation (`healthgate.mdc.valueKind: attributes`): PhdCompoundObservation
    /// with no value of its own, a component per attribute (``PHDCoding/attributeComponents(_:)``).
    mutating func add(attributes sample: QuantitySample, patient: String) {
        add(sample, profile: .compound, patient: patient) { observation in
            let attributes = PHDCoding.attributeComponents(sample.metadata)
            if attributes.isEmpty { observation.fields["dataAbsentReason"] = PHDCoding.noContent }
            observation.components = attributes + observation.components
        }
    }

    /// An Observation of `profile` for a generic sample whose value is not a measurement: its MDC
    /// code and the elements every profile shares; `value` adds the profile's value unless the
    /// measurement status says it has none.
    private mutating func add(
        _ sample: QuantitySample, profile: PHDGuide.Profile, patient: String, value: (inout PHDObservation) -> Void
    ) {
        guard let code = PHDCoding.observationCode(sample.type, metadata: sample.metadata) else {
            return leftOut.append(.init(type: sample.type.identifier, reason: .withoutCode(sample.type)))
        }
        guard let devices = devices(of: sample.device, metadata: sample.metadata) else {
            return leftOut.append(.init(type: sample.type.identifier, reason: .noDevice))
        }
        let identifier = guideIdentifier(sample.device, patient: patient, code: code, metadata: sample.metadata)
        var observation = PHDObservation(
            profile: profile, id: sample.id, code: code, vital: nil, start: sample.startDate, end: sample.endDate,
            metadata: sample.metadata, guideIdentifier: identifier, patient: patient, devices: devices,
            coincidentTimeStamp: coincidentTimeStamp(start: sample.startDate, metadata: sample.metadata, devices: devices))
        if observation.status.dataAbsentReason == nil { value(&observation) }
        observations.append(observation.entry)
    }

    mutating func add(bloodPressure correlation: CorrelationSample, patient: String) {
        guard let devices = devices(of: correlation.device, metadata: correlation.metadata) else {
            return leftOut.append(.init(type: correlation.type.identifier, reason: .noDevice))
        }
        let code = correlation.metadata[.mdcObservationType]?.textValue.flatMap { UInt32($0) } ?? MDCNomenclature.nonInvasiveBloodPressure
        var observation = PHDObservation(
            profile: .compoundNumeric, id: correlation.id, code: code, vital: FHIRMapping.bloodPressurePanel,
            start: correlation.startDate, end: correlation.endDate, metadata: correlation.metadata,
            guideIdentifier: guideIdentifier(correlation.device, patient: patient, code: code, metadata: correlation.metadata),
            patient: patient, devices: devices,
            coincidentTimeStamp: coincidentTimeStamp(start: correlation.startDate, metadata: correlation.metadata, devices: devices))
        if observation.status.dataAbsentReason == nil {
            // "These entries are NOT present if a Measurement-Status attribute indicates an
            // error" (PhdCompoundNumericObservation.fsh, component[compound]).
            var components: [JSONValue] = []
            for member in correlation.objects {
                guard let memberCode = PHDCoding.observationCode(member.type, metadata: member.metadata),
                    let unit = PHDCoding.unit(member.type, metadata: member.metadata), let value = unit.value(of: member.quantity)
                else { continue }
                components.append(component(code: memberCode, vital: FHIRMapping.vitalSign(member.type), value: unit.quantity(value)))
            }
            if let mean = correlation.metadata[.meanArterialPressure]?.numberValue,
                let unit = PHDCoding.unit(.bloodPressureSystolic, metadata: Metadata())
            {
                components.append(component(code: MDCNomenclature.nonInvasiveBloodPressureMean, vital: nil, value: unit.quantity(mean)))
            }
            observation.components = components + observation.components
        }
        observations.append(observation.entry)
    }

    /// A compound's component: its MDC code (the slice MdcType, 1..1), the vital-signs LOINC
    /// code where R4 names one, and the value.
    func component(code: UInt32, vital: FHIRMapping.Code?, value: JSONValue) -> JSONValue {
        var codings = [PHDCoding.coding(code)]
        if let vital, let loinc = vital.loinc {
            codings.append(.object(["system": .string("http://loinc.org"), "code": .string(loinc), "display": .string(vital.display)]))
        }
        var concept: [String: JSONValue] = ["coding": .array(codings)]
        if let text = vital?.display ?? MDCNomenclature.observation(code)?.reference { concept["text"] = .string(text) }
        return .object(["code": .object(concept), "valueQuantity": value])
    }

    /// A series as a sampled-data Observation (PhdRtsaObservation): its quantities on the grid,
    /// in the unit sent, `origin` 0 and `factor` 1 (1.. in the profile), so a data point is the
    /// value itself. A vital sign (a strap's heart rate) has its LOINC code but no vital-signs
    /// category (``PHDObservation``): R4's vital-signs profiles take only a valueQuantity.
    mutating func add(sampled series: QuantitySeriesSample, grid: SampledDataGrid, patient: String) {
        guard let code = PHDCoding.observationCode(series.type, metadata: series.metadata) else {
            return leftOut.append(.init(type: series.type.identifier, reason: .withoutCode(series.type)))
        }
        let unit = PHDCoding.unit(series.type, metadata: series.metadata)
        let values = unit.map { unit in series.quantities.compactMap { unit.value(of: Quantity($0.value, series.unit)) } }
        guard let unit, let values, values.count == series.count else {
            return leftOut.append(.init(type: series.type.identifier, reason: .noUnit))
        }
        guard let devices = devices(of: series.device, metadata: series.metadata) else {
            return leftOut.append(.init(type: series.type.identifier, reason: .noDevice))
        }
        let identifier = guideIdentifier(series.device, patient: patient, code: code, metadata: series.metadata)
        var observation = PHDObservation(
            profile: .rtsa, id: series.id, code: code, vital: PHDCoding.vitalSign(code: code, type: series.type),
            start: series.startDate, end: series.endDate,
            metadata: series.metadata, guideIdentifier: identifier, patient: patient, devices: devices,
            coincidentTimeStamp: coincidentTimeStamp(start: series.startDate, metadata: series.metadata, devices: devices))
        if observation.status.dataAbsentReason == nil {
            observation.fields["valueSampledData"] = .object([
                "origin": unit.quantity(0), "period": .number(grid.periodMilliseconds), "factor": .number(1),
                "dimensions": .number(1), "data": .string(grid.data(values)),
            ])
        }
        observations.append(observation.entry)
    }

    /// The guide's conditional-create identifier of a reading (``PHDObservationIdentifier``), or
    /// nil: for a quantity of a series, whose quantities share its time stamp and so would be
    /// one, and for a second reading of the Bundle with the same identifier (the readings a
    /// device's one observation of several codes became), which it would make one.
    mutating func guideIdentifier(_ device: Device?, patient: String, code: UInt32, metadata: Metadata) -> String? {
        guard metadata[.series] == nil,
            let value = PHDObservationIdentifier.value(device: device, patient: patient, type: code, metadata: metadata),
            guideIdentifiers.insert(value).inserted
        else { return nil }
        return value
    }

    /// The `fullUrl` of the Coincident Time Stamp Observation of a reading at `start` with
    /// `metadata` (``PHDCoincidentTimeStamp``), added to the Bundle the first time; nil when the
    /// gateway did not change the reading's time.
    mutating func coincidentTimeStamp(
        start: Date, metadata: Metadata, devices: (phd: PHDDeviceMapping.Entry, phg: PHDDeviceMapping.Entry)
    ) -> String? {
        guard let stamp = PHDCoincidentTimeStamp(start: start, metadata: metadata) else { return nil }
        let made = stamp.entry(devices: devices)
        if !coincidentTimeStamps.contains(where: { $0.fullUrl == made.fullUrl }) { coincidentTimeStamps.append(made) }
        return made.fullUrl
    }

    // MARK: Devices

    /// The PhdDevice and PhgDevice of a record, each added to the Bundle once; nil when the
    /// record has no device with an identity.
    mutating func devices(of device: Device?, metadata: Metadata) -> (phd: PHDDeviceMapping.Entry, phg: PHDDeviceMapping.Entry)? {
        guard let device, let phd = PHDDeviceMapping.phd(device, metadata: metadata) else { return nil }
        let name: String = if case .string(let name)? = metadata[.gatewayName] { name } else { gateway }
        let version: String? = if case .string(let version)? = metadata[.gatewayVersion] { version } else { nil }
        let phg = PHDDeviceMapping.phg(name: name, version: version, facts: name == gateway ? facts : nil)
        let known = devices.first { $0.fullUrl == phd.fullUrl }
        if known == nil { devices.append(phd) }
        let knownGateway = gateways.first { $0.fullUrl == phg.fullUrl }
        if knownGateway == nil { gateways.append(phg) }
        return (known ?? phd, knownGateway ?? phg)
    }
}

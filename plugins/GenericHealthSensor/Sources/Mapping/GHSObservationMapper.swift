public import FoundationEssentials
import GATTDecoding
import GatewayRuntime
public import HealthModel

/// Metadata keys only the Generic Health Sensor source writes.
extension MetadataKey {
    /// A state/event observation's supported-bits mask (hex, as sent).
    public static let mdcSupportedMask: MetadataKey = "healthgate.mdc.supportedMask"
    /// A state/event observation's state-or-event mask (hex, as sent).
    public static let mdcStateMask: MetadataKey = "healthgate.mdc.stateMask"
    /// The record number of a stored observation (the sensor's).
    public static let ghsRecordNumber: MetadataKey = "healthgate.ghs.recordNumber"
}

/// Turns a decoded ACOM observation into records, with the one table of MDC codes
/// (``MDCNomenclature``). Pure: no clock, no I/O.
///
/// | class | becomes |
/// | --- | --- |
/// | numeric | a sample of its type (`oxygenSaturation`…), its value converted from the unit sent; a generic observation (`mdc.{type}.{unit}`) when the type or unit has no row |
/// | compound MDC_PRESS_BLD_NONINV | a `bloodPressure` correlation, the mean in its metadata |
/// | other compound | a sample per component, as numerics |
/// | sample array | a quantity series, one quantity per sample at its time |
/// | simple discrete, compound discrete event | its codes in `healthgate.mdc.events` of the observation it is derived from in the same object; else a generic observation per code (the value is the code) |
/// | compound state/event | a generic observation: the state bits as a number, the masks in metadata |
/// | string | a generic observation of one (the value 1), its text in `healthgate.mdc.text` (``MDCValueKind/text``) |
/// | TLV-encoded | a generic observation of one, each entry an attribute `healthgate.mdc.attribute.{type}` (``MDCValueKind/attributes``) |
/// | bundle | each member, with the bundle's time stamp, patient, status and supplemental codes where it has none |
///
/// The TLV attributes of any observation's header are kept the same way, in its records' metadata.
///
/// Times: a time stamp of the time of day (UTC, or local with its offset) places the
/// observation; one without a time stamp, a tick counter or local time without an offset is
/// placed at its reception when it is live, and not stored when it came from the sensor's memory
/// (it cannot be placed). An observation the sensor marks invalid or not available, and a special
/// value (NaN, NRes, ±INFINITY), are not stored; one without a type is kept, of type code 0
/// (``MDCNomenclature/untypedObservation``). Every record gets a sync identifier from the
/// sensor, its time stamp (or record number) and ``identity(_:path:)``, and a uuid derived from
/// it: an observation sent twice is stored once, two observations of one time stay two.
public enum GHSObservationMapper {
    /// The records of an observation, and why any part of it was not stored.
    public struct Mapped: Sendable {
        public var records: [HealthRecord] = []
        public var skipped: [String] = []
    }

    /// 2000-01-01T00:00:00Z, the epoch of GHS time stamps.
    static let epoch2000 = Date(timeIntervalSince1970: 946_684_800)

    /// The records of `observation`.
    /// - Parameters:
    ///   - sensor: the sensor's identity in sync identifiers (its local identifier).
    ///   - recordNumber: the record number of a stored observation; nil for a live one.
    ///   - receivedAt: when its last segment arrived (the gateway's clock).
    public static func records(
        of observation: GHSObservation, device: Device, sensor: String, recordNumber: UInt32?, receivedAt: Date
    ) -> Mapped {
        var mapped = Mapped()
        let context = Context(device: device, sensor: sensor, recordNumber: recordNumber, receivedAt: receivedAt)
        let members: [(GHSObservation, path: String)]
        if case .bundle(let bundled) = observation.value {
            members = bundled.enumerated().map { (inheriting(observation, into: $1), "bundle.\($0)") }
        } else {
            members = [(observation, "object")]
        }
        // Event codes derived from an observation of the same object go into its metadata.
        var events: [UInt32: [UInt32]] = [:]
        for (member, _) in members {
            guard let targets = member.derivedFrom, let codes = eventCodes(member) else { continue }
            for target in targets where members.contains(where: { $0.0.objectID == target && !isEvent($0.0) }) {
                events[target, default: []] += codes
            }
        }
        for (member, path) in members {
            if isEvent(member), let targets = member.derivedFrom, targets.contains(where: { events[$0] != nil }) { continue }
            map(member, path: path, events: member.objectID.flatMap { events[$0] } ?? [], context: context, into: &mapped)
        }
        return mapped
    }

    struct Context {
        let device: Device
        let sensor: String
        let recordNumber: UInt32?
        let receivedAt: Date
    }

    /// A bundle member with the bundle's header fields where it has none of its own.
    static func inheriting(_ bundle: GHSObservation, into member: GHSObservation) -> GHSObservation {
        var member = member
        member.timestamp = member.timestamp ?? bundle.timestamp
        member.measurementDuration = member.measurementDuration ?? bundle.measurementDuration
        member.measurementStatus = member.measurementStatus ?? bundle.measurementStatus
        member.patient = member.patient ?? bundle.patient
        member.supplementalInformation = member.supplementalInformation ?? bundle.supplementalInformation
        return member
    }

    static func isEvent(_ observation: GHSObservation) -> Bool {
        switch observation.value {
        case .simpleDiscrete, .compoundDiscreteEvent: true
        default: false
        }
    }

    static func eventCodes(_ observation: GHSObservation) -> [UInt32]? {
        switch observation.value {
        case .simpleDiscrete(let code): [code]
        case .compoundDiscreteEvent(let codes): codes
        default: nil
        }
    }

    /// Maps one observation that is not a bundle.
    static func map(_ observation: GHSObservation, path: String, events: [UInt32], context: Context, into mapped: inout Mapped) {
        let label = describe(observation)
        if let status = observation.measurementStatus, status.contains(.invalid) || status.contains(.notAvailable) {
            mapped.skipped.append("\(label): the sensor marks it \(status.names.joined(separator: ", "))")
            return
        }
        // An observation without a type is kept as a generic observation of type code 0, which
        // names no observation: its text, attributes or samples are what a clinic reads of it.
        let type = observation.type ?? MDCNomenclature.untypedObservation
        guard let time = place(observation, context: context) else {
            mapped.skipped.append("\(label): a stored observation whose time stamp cannot be placed (\(timestampSummary(observation.timestamp)))")
            return
        }
        var metadata = baseMetadata(observation, path: path, context: context)
        // Dated by the sensor's own clock: a step of the gateway's clock does not move it.
        if placedBySensor(observation) {
            metadata[.deviceClock] = .bool(true)
        }
        if !events.isEmpty { metadata[.mdcEvents] = .string(events.map(String.init).joined(separator: ",")) }
        let end = time.addingTimeInterval(observation.measurementDuration?.number.map { max(0, $0) } ?? 0)
        do {
            switch observation.value {
            case .numeric(let unit, let value):
                guard let number = value.number else {
                    mapped.skipped.append("\(label): value \(value)")
                    return
                }
                mapped.records.append(.quantity(try sample(type: type, unit: unit, value: number, start: time, end: end, metadata: metadata, context: context)))
            case .compound(let components):
                if type == MDCNomenclature.nonInvasiveBloodPressure, let correlation = try bloodPressure(components, start: time, end: end, metadata: metadata, context: context) {
                    mapped.records.append(.correlation(correlation))
                    return
                }
                for (index, component) in components.enumerated() {
                    guard let number = component.value.number else {
                        mapped.skipped.append("\(label) component \(component.type): value \(component.value)")
                        continue
                    }
                    var componentMetadata = metadata
                    componentMetadata.syncIdentifier = metadata.syncIdentifier.map { "\($0)/\(index)" }
                    componentMetadata[.mdcObservationType] = .integer(Int64(component.type))
                    componentMetadata[.mdcUnit] = .integer(Int64(component.unit))
                    mapped.records.append(
                        .quantity(try sample(type: component.type, unit: component.unit, value: number, start: time, end: end, metadata: componentMetadata, context: context)))
                }
            case .sampleArray(let array):
                guard let values = array.scaledSamples, let period = array.samplePeriod.number, period > 0, !values.isEmpty else {
                    mapped.skipped.append("\(label): a sample array without samples, scale or period")
                    return
                }
                let step = period / Double(max(1, array.samplesPerPeriod))
                let (quantityType, unit) = typeAndUnit(type, array.unit)
                metadata[.mdcUnit] = .integer(Int64(array.unit))
                let quantities = values.enumerated().map { index, value in
                    let at = time.addingTimeInterval(Double(index) * step)
                    return SeriesQuantity(value: value, start: at, end: at)
                }
                mapped.records.append(
                    .quantitySeries(
                        try QuantitySeriesSample(
                            id: id(metadata), type: quantityType, unit: unit, quantities: quantities, device: context.device, metadata: metadata)))
            case .simpleDiscrete(let code):
                metadata.mdcValueKind = .code
                mapped.records.append(.quantity(try sample(type: type, unit: dimensionless, value: Double(code), start: time, end: end, metadata: metadata, context: context)))
            case .compoundDiscreteEvent(let codes):
                metadata.mdcValueKind = .code
                for (index, code) in codes.enumerated() {
                    var codeMetadata = metadata
                    codeMetadata.syncIdentifier = metadata.syncIdentifier.map { "\($0)/\(index)" }
                    mapped.records.append(.quantity(try sample(type: type, unit: dimensionless, value: Double(code), start: time, end: end, metadata: codeMetadata, context: context)))
                }
            case .compoundStateEvent(let state):
                let bits = state.value.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                metadata.mdcValueKind = .bits
                metadata[.mdcSupportedMask] = .string(hex(state.supportedMask))
                metadata[.mdcStateMask] = .string(hex(state.stateMask))
                mapped.records.append(.quantity(try sample(type: type, unit: dimensionless, value: Double(bits), start: time, end: end, metadata: metadata, context: context)))
            case .string(let text):
                // One observation: the text is its content, the count what statistics add up.
                metadata.mdcValueKind = .text
                metadata[.mdcText] = .string(text)
                mapped.records.append(.quantity(try sample(type: type, unit: dimensionless, value: 1, start: time, end: end, metadata: metadata, context: context)))
            case .tlvEncoded(let entries):
                metadata.mdcValueKind = .attributes
                keep(entries, in: &metadata)
                mapped.records.append(.quantity(try sample(type: type, unit: dimensionless, value: 1, start: time, end: end, metadata: metadata, context: context)))
            case .bundle:
                mapped.skipped.append("\(label): a bundle inside a bundle")
            }
        } catch {
            mapped.skipped.append("\(label): \(error)")
        }
    }

    /// What the gateway stores an observation of `type` in `unit` as (`healthgate decode`'s
    /// `sampleType`): `bloodPressure` for the blood pressure compound, the sample type or generic
    /// observation of a value in `unit`, the table's type when no unit is known; nil otherwise.
    /// An object without a type is named as it is stored (``MDCNomenclature/untypedObservation``).
    @Sendable public static func sampleTypeName(_ type: UInt32?, _ unit: UInt16?) -> String? {
        let type = type ?? MDCNomenclature.untypedObservation
        if type == MDCNomenclature.nonInvasiveBloodPressure { return CorrelationType.bloodPressure.identifier }
        guard let unit else { return MDCNomenclature.observation(type)?.type.identifier }
        return typeAndUnit(type, unit).0.identifier
    }

    /// MDC_DIM_DIMLESS: the unit of a code or of state bits.
    static let dimensionless: UInt16 = 512

    /// The sample type and unit for `type` sent in `unitCode`: the table's type when it has the
    /// type and the unit converts into it, else the generic observation's.
    static func typeAndUnit(_ type: UInt32, _ unitCode: UInt16) -> (QuantityType, HealthUnit) {
        if let mapped = MDCNomenclature.observation(type)?.type, let unit = MDCNomenclature.unit(unitCode)?.unit, mapped.accepts(unit) {
            return (mapped, unit)
        }
        let generic = MDCNomenclature.genericType(observation: type, unit: unitCode)
        return (generic, generic.canonicalUnit)
    }

    static func sample(
        type: UInt32, unit: UInt16, value: Double, start: Date, end: Date, metadata: Metadata, context: Context
    ) throws(SampleError) -> QuantitySample {
        let (quantityType, healthUnit) = typeAndUnit(type, unit)
        var metadata = metadata
        metadata[.mdcUnit] = .integer(Int64(unit))
        return try QuantitySample(
            id: id(metadata), type: quantityType, quantity: Quantity(value, healthUnit), start: start, end: end, device: context.device,
            metadata: metadata)
    }

    /// A blood pressure compound as a correlation: nil when it lacks a systolic or diastolic
    /// component in a unit of pressure (then its components are stored one by one).
    static func bloodPressure(
        _ components: [GHSCompoundComponent], start: Date, end: Date, metadata: Metadata, context: Context
    ) throws(SampleError) -> CorrelationSample? {
        func pressure(_ code: UInt32) -> (value: Double, unit: HealthUnit, component: GHSCompoundComponent)? {
            guard let component = components.first(where: { $0.type == code }), let value = component.value.number,
                let unit = MDCNomenclature.unit(component.unit)?.unit, unit.isCompatible(with: .millimeterOfMercury)
            else { return nil }
            return (value, unit, component)
        }
        guard let systolic = pressure(150_021), let diastolic = pressure(150_022) else { return nil }
        func member(_ part: (value: Double, unit: HealthUnit, component: GHSCompoundComponent), _ type: QuantityType) throws(SampleError) -> QuantitySample {
            var memberMetadata = Metadata()
            memberMetadata.syncIdentifier = metadata.syncIdentifier.map { "\($0)/\(part.component.type)" }
            memberMetadata.syncVersion = 1
            memberMetadata[.mdcObservationType] = .integer(Int64(part.component.type))
            memberMetadata[.mdcUnit] = .integer(Int64(part.component.unit))
            memberMetadata[.deviceTimestamp] = metadata[.deviceTimestamp]
            return try QuantitySample(
                id: id(memberMetadata), type: type, quantity: Quantity(part.value, part.unit), start: start, end: end, device: context.device,
                metadata: memberMetadata)
        }
        var correlationMetadata = metadata
        if let mean = pressure(MDCNomenclature.nonInvasiveBloodPressureMean), let millimeters = try? mean.unit.convert(mean.value, to: .millimeterOfMercury) {
            correlationMetadata[.meanArterialPressure] = .double(millimeters)
        }
        return try CorrelationSample.bloodPressure(
            id: id(correlationMetadata), systolic: member(systolic, .bloodPressureSystolic), diastolic: member(diastolic, .bloodPressureDiastolic),
            device: context.device, metadata: correlationMetadata)
    }

    /// Whether the observation's own time stamp places it (a time of day in UTC, or local time
    /// with its offset), rather than its reception.
    static func placedBySensor(_ observation: GHSObservation) -> Bool {
        guard let timestamp = observation.timestamp, timestamp.secondsSince2000 != nil else { return false }
        return timestamp.isUTC || timestamp.offsetMinutes != nil
    }

    /// When the observation was made: its time stamp's time of day (UTC, or local less its
    /// offset); else its reception for a live one; nil for a stored one.
    static func place(_ observation: GHSObservation, context: Context) -> Date? {
        if placedBySensor(observation), let timestamp = observation.timestamp, let seconds = timestamp.secondsSince2000 {
            return epoch2000.addingTimeInterval(seconds - Double(timestamp.isUTC ? 0 : timestamp.offsetMinutes ?? 0) * 60)
        }
        return context.recordNumber == nil ? context.receivedAt : nil
    }

    /// The metadata every record of the observation carries, and its sync identifier.
    static func baseMetadata(_ observation: GHSObservation, path: String, context: Context) -> Metadata {
        var metadata = Metadata()
        if let type = observation.type { metadata[.mdcObservationType] = .integer(Int64(type)) }
        if let patient = observation.patient { metadata[.mdcPatient] = .integer(Int64(patient)) }
        if let codes = observation.supplementalInformation, !codes.isEmpty {
            metadata[.mdcSupplementalTypes] = .string(codes.map(String.init).joined(separator: ","))
        }
        if let duration = observation.measurementDuration?.number { metadata[.mdcMeasurementDuration] = .double(duration) }
        if let status = observation.measurementStatus, status.rawValue != 0 { metadata[.mdcMeasurementStatus] = .integer(Int64(status.rawValue)) }
        if let objectID = observation.objectID { metadata[.mdcObjectID] = .integer(Int64(objectID)) }
        if let tlvs = observation.tlvs { keep(tlvs, in: &metadata) }
        if let recordNumber = context.recordNumber { metadata[.ghsRecordNumber] = .integer(Int64(recordNumber)) }
        let when: String?
        if let timestamp = observation.timestamp {
            when = deviceTime(timestamp)
            metadata[.deviceTimestamp] = .string(deviceTime(timestamp))
        } else {
            when = context.recordNumber.map { "record-\($0)" }
        }
        if let when {
            metadata.syncIdentifier = "\(context.sensor)/ghs/\(when)/\(identity(observation, path: path))"
            metadata.syncVersion = 1
        }
        return metadata
    }

    /// What tells an observation apart from another of the same sensor and time: its patient,
    /// type, class, unit, place in the object (`object`, or `bundle.{i}` for a bundle's member)
    /// and object id. A simple-discrete SpO2 code and a bundle's numeric SpO2 of the same second
    /// are two observations, and keep two records.
    static func identity(_ observation: GHSObservation, path: String) -> String {
        let patient = observation.patient.map { "p\($0)/" } ?? ""
        let unit: String =
            switch observation.value {
            case .numeric(let unit, _): String(unit)
            case .sampleArray(let array): String(array.unit)
            default: "-"
            }
        let objectID = observation.objectID.map { "/o\($0)" } ?? ""
        return "\(patient)\(observation.type.map(String.init) ?? "-")/\(observation.observationClass.name)/\(unit)/\(path)\(objectID)"
    }

    /// Keeps TLV entries as the observation's attributes (``MetadataKey/mdcAttribute(_:occurrence:)``):
    /// a number as a number, text as text, a boolean as a boolean; a value whose format the
    /// decoder does not read (a structure, an unknown format, a length that is not its format's
    /// width) and a special medical float as `0x` and its bytes in hex, as sent.
    static func keep(_ entries: [GHSTLV], in metadata: inout Metadata) {
        var seen: [UInt32: Int] = [:]
        for entry in entries {
            let occurrence = (seen[entry.type] ?? 0) + 1
            seen[entry.type] = occurrence
            let value: MetadataValue =
                switch entry.value {
                case .boolean(let flag)?: .bool(flag)
                case .unsigned(let number)? where number <= UInt64(Int64.max): .integer(Int64(number))
                case .signed(let number)?: .integer(number)
                case .number(let number)? where number.isFinite: .double(number)
                case .medical(.value(let number))?: .double(number)
                case .text(let text)?: .string(text)
                default: .string("0x" + hex(entry.bytes))
                }
            metadata[.mdcAttribute(entry.type, occurrence: occurrence)] = value
        }
    }

    /// The time stamp as the sensor stated it: RFC 3339 for a time of day (with its offset for
    /// local time; milliseconds, or four decimals of the second for a clock counting tenths of
    /// milliseconds), `ticks:{value}` for a tick counter.
    static func deviceTime(_ timestamp: GHSTimestamp) -> String {
        guard timestamp.secondsSince2000 != nil else { return "ticks:\(timestamp.value)@\(timestamp.resolution.seconds)" }
        // The clock's reading as UTC components, then the designator of the zone it was read in.
        // Whole seconds and milliseconds from the count itself: a Date of .132 may hold
        // .13199996, which a formatter truncates to .131 (#78: the store said .132, this .131).
        // Milliseconds, or tenths of them for a clock that counts them.
        let units = UInt64(timestamp.resolution.unitsPerSecond)
        let fine = timestamp.resolution == .hundredMicroseconds
        let fraction = timestamp.value % units * (fine ? 10_000 : 1000) / units
        var text = epoch2000.addingTimeInterval(Double(timestamp.value / units)).formatted(Date.ISO8601FormatStyle())
        text.removeLast()  // the "Z"
        text += String(cFormat: fine ? ".%04llu" : ".%03llu", fraction)
        guard !timestamp.isUTC else { return text + "Z" }
        guard let offset = timestamp.offsetMinutes else { return text }  // local time of an unknown zone
        return text + (offset < 0 ? "-" : "+") + String(cFormat: "%02ld:%02ld", abs(offset) / 60, abs(offset) % 60)
    }

    static func timestampSummary(_ timestamp: GHSTimestamp?) -> String {
        guard let timestamp else { return "none" }
        if timestamp.isTickCounter { return "a tick counter" }
        return "local time without its offset"
    }

    /// The record's uuid: from its sync identifier when it has one, else a new one.
    static func id(_ metadata: Metadata) -> SampleID {
        metadata.syncIdentifier.map { SampleID(syncIdentifier: $0, version: 1) } ?? SampleID(UUID())
    }

    static func describe(_ observation: GHSObservation) -> String {
        "\(observation.observationClass.name) observation \(observation.type.map { MDCNomenclature.reference($0) ?? String($0) } ?? "without a type")"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(cFormat: "%02X", $0) }.joined()
    }
}

import FoundationEssentials
import HealthModel
import GatewayRuntime

/// One PHD Observation as ``PHDMapping`` assembles it: the elements every PHD profile shares
/// (StructureDefinition.PhdBaseObservation.fsh), set by ``init(profile:id:code:vital:start:end:metadata:guideIdentifier:patient:devices:)``,
/// to which the mapping adds its profile's value or components; ``entry`` is its conditional
/// create. Pure.
struct PHDObservation {
    var fields: [String: JSONValue]
    /// The supplemental-types components (a compound puts its own before them).
    var components: [JSONValue]
    let status: PHDMeasurementStatus
    let id: SampleID
    /// The identifiers: the guide's when it can be made, then the uuid. The Observation is
    /// created unless the server holds one with either.
    let identifiers: [(system: String, value: String)]

    /// - `meta.profile` the profile, `meta.security` HTEST for test data, `meta.tag` the series
    ///   of a series' quantity (what deleting the series finds it by).
    /// - `extension[GatewayDevice]` (1..1), `device` (1..), `subject` (1..): the Bundle's
    ///   PhgDevice, PhdDevice and patient (the PhdDevice for a device setting).
    /// - `extension[CoincidentTimeStamp]` (0..1): the Coincident Time Stamp Observation at
    ///   `coincidentTimeStamp` when the gateway changed the reading's time (``PHDCoincidentTimeStamp``).
    /// - `identifier`: the guide's conditional-create identifier `guideIdentifier` when there is
    ///   one, then the uuid.
    /// - `status`, `dataAbsentReason`, `interpretation`, `note`: the measurement status.
    /// - `category`: `phd` (1..1), and `vital-signs` with the LOINC code for a vital sign.
    ///   `code` carries a vital sign's LOINC code whatever its value ("the corresponding LOINC
    ///   code shall be present in an additional coding element", Nomenclaturecodes.md; of a
    ///   sample array: "If it is a vital sign, the same FHIR-required LOINC code requirements
    ///   apply", ProfileConsumers.md, "Periodic measurements"); the `vital-signs` category only
    ///   when the value is a Quantity: it claims R4's vital-signs profile, whose `value[x]` is
    ///   only Quantity, and the guide's examples put it only on a `valueQuantity`
    ///   (bundle-continuousnonin.json), never on a sample array (rtsa-example.json).
    /// - `effectiveDateTime` for an instant, else `effectivePeriod` (1..).
    init(
        profile: PHDGuide.Profile, id: SampleID, code: UInt32, vital: FHIRMapping.Code?, start: Date, end: Date, metadata: Metadata,
        guideIdentifier: String?, patient: String, devices: (phd: PHDDeviceMapping.Entry, phg: PHDDeviceMapping.Entry),
        coincidentTimeStamp: String? = nil
    ) {
        self.id = id
        status = PHDMeasurementStatus(metadata)
        var meta: [String: JSONValue] = ["profile": .array([.string(profile.url)])]
        if status.isTestData {
            meta["security"] = .array([.object([
                "system": .string(PHDGuide.testDataSecuritySystem), "code": .string(PHDGuide.testDataSecurityCode),
            ])])
        }
        if case .string(let series)? = metadata[.series] {
            meta["tag"] = .array([.object(["system": .string(FHIRMapping.seriesTagSystem), "code": .string(series.lowercased())])])
        }
        var identifiers: [(system: String, value: String)] = []
        if let guideIdentifier { identifiers.append((PHDGuide.observationIdentifierSystem, guideIdentifier)) }
        identifiers.append((PHDMapping.uuidIdentifierSystem, PHDMapping.uuidURN(id)))
        self.identifiers = identifiers
        var categories: [JSONValue] = [
            .object(["coding": .array([.object([
                "system": .string(PHDGuide.categorySystem), "code": .string(PHDGuide.categoryCode),
                "display": .string("PHD generated Observation"),
            ])])]),
        ]
        var codings = [PHDCoding.coding(code)]
        if vital?.loinc != nil, profile != .rtsa {
            categories.insert(.object([
                "coding": .array([.object([
                    "system": .string("http://terminology.hl7.org/CodeSystem/observation-category"), "code": .string("vital-signs"),
                    "display": .string("Vital Signs"),
                ])]),
            ]), at: 0)
        }
        if let vital, let loinc = vital.loinc {
            codings.append(.object(["system": .string("http://loinc.org"), "code": .string(loinc), "display": .string(vital.display)]))
        }
        var concept: [String: JSONValue] = ["coding": .array(codings)]
        if let text = vital?.display ?? MDCNomenclature.observation(code)?.reference { concept["text"] = .string(text) }
        var extensions: [JSONValue] = [.object([
            "url": .string(PHDGuide.gatewayDeviceExtension), "valueReference": .object(["reference": .string(devices.phg.fullUrl)]),
        ])]
        if let coincidentTimeStamp {
            extensions.append(.object([
                "url": .string(PHDGuide.coincidentTimeStampExtension), "valueReference": .object(["reference": .string(coincidentTimeStamp)]),
            ]))
        }
        fields = [
            "resourceType": .string("Observation"),
            "meta": .object(meta),
            "extension": .array(extensions),
            "identifier": .array(identifiers.map { .object(["system": .string($0.system), "value": .string($0.value)]) }),
            "status": .string(status.observationStatus),
            "category": .array(categories),
            "code": .object(concept),
            "subject": .object(["reference": .string(status.isSetting ? devices.phd.fullUrl : patient)]),
            "device": .object(["reference": .string(devices.phd.fullUrl)]),
        ]
        if start == end {
            fields["effectiveDateTime"] = .string(RFC3339.string(from: start))
        } else {
            fields["effectivePeriod"] = .object(["start": .string(RFC3339.string(from: start)), "end": .string(RFC3339.string(from: end))])
        }
        if let absent = status.dataAbsentReason {
            fields["dataAbsentReason"] = .object(["coding": .array([.object([
                "system": .string(PHDGuide.dataAbsentReasonSystem), "code": .string(absent.code), "display": .string(absent.display),
            ])])])
        }
        let interpretations = status.interpretations
        if !interpretations.isEmpty {
            fields["interpretation"] = .array(interpretations.map { code in
                .object(["coding": .array([.object(["system": .string(PHDGuide.measurementStatusSystem), "code": .string(code)])])])
            })
        }
        let notes = status.notes
        if !notes.isEmpty { fields["note"] = .array(notes.map { .object(["text": .string($0)]) }) }
        // One component per supplemental type (PhdBaseObservation.fsh, supplementalTypesComponent).
        components = PHDObservationIdentifier.supplementalTypes(metadata).map { type in
            .object([
                "code": .object(["coding": .array([
                    PHDCoding.coding(PHDGuide.supplementalTypesCode, reference: PHDGuide.supplementalTypesReference),
                ])]),
                "valueCodeableConcept": .object(["coding": .array([PHDCoding.coding(type)])]),
            ])
        }
    }

    /// The Bundle entry: created unless the server holds an Observation with one of its
    /// ``identifiers``.
    var entry: JSONValue {
        var resource = fields
        if !components.isEmpty { resource["component"] = .array(components) }
        return .object([
            "fullUrl": .string(PHDMapping.uuidURN(id)),
            "resource": .object(resource),
            "request": .object([
                "method": .string("POST"), "url": .string("Observation"),
                "ifNoneExist": .string(PHDMapping.identifierSearch(identifiers)),
            ]),
        ])
    }
}

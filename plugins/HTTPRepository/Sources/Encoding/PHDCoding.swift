import HealthModel
import GatewayRuntime

/// What a reading is in IEEE 11073-10101 terms, for the `fhir-phd` form: its observation code
/// and the unit its value is sent in, derived from the one table (``HealthModel/MDCNomenclature``)
/// and from what the device said (``HealthModel/MetadataKey/mdcObservationType``,
/// ``HealthModel/MetadataKey/mdcUnit``). Pure.
enum PHDCoding {
    /// The MDC code of a reading of `type`: the code the device sent, else the generic
    /// observation's (`mdc.{observation}.{unit}`), else the table's row for the type (its first
    /// row: the code a receiver is sent). nil for a type the table has no code for, and for an
    /// observation the device sent without a type (`mdc.0.{unit}`).
    static func observationCode(_ type: QuantityType, metadata: Metadata) -> UInt32? {
        if let sent = metadata[.mdcObservationType]?.textValue.flatMap({ UInt32($0) }) { return sent }
        if let generic = MDCNomenclature.genericCodes(type.identifier) {
            // An observation sent without a type has no code to send.
            return generic.observation == MDCNomenclature.untypedObservation ? nil : generic.observation
        }
        if type == .heartRate { return heartRateCode(metadata) }
        return MDCNomenclature.code(for: type)?.code
    }

    /// The code of a heart rate whose device sent none: the table's row for what the device is.
    /// The guide codes a pulse rate by its source: "the pulse rate obtained from a Blood Pressure
    /// Cuff (149546) and the pulse rate obtained from a Pulse Oximeter (149530)"
    /// (ProfileConsumers.md, "The Measurement Type"). A cuff (MDC_DEV_SPEC_PROFILE_BP) sends
    /// MDC_PULS_RATE_NON_INV, an oximeter (MDC_DEV_SPEC_PROFILE_PULS_OXIM) MDC_PULS_OXIM_PULS_RATE;
    /// a device that names neither is a heart-rate monitor (a strap over the Heart Rate Service or
    /// ANT+, a machine's grips or strap), mapped "as if" it were an IEEE 11073 device of that
    /// kind (Non11073PHDDevices.md): the heart-rate ECG specialization
    /// (MDC_DEV_SUB_SPEC_PROFILE_HR, "ECG supporting just heart rate"), whose heart rate is
    /// MDC_ECG_HEART_RATE.
    static func heartRateCode(_ metadata: Metadata) -> UInt32? {
        let listed = Set(listedSpecializations(metadata).map(\.code))
        let reference =
            if listed.contains(MDCDeviceSpecialization.bloodPressure.code) { "MDC_PULS_RATE_NON_INV" }
            else if listed.contains(MDCDeviceSpecialization.pulseOximeter.code) { "MDC_PULS_OXIM_PULS_RATE" }
            else { "MDC_ECG_HEART_RATE" }
        return MDCNomenclature.observations.first { $0.type == .heartRate && $0.reference == reference }?.code
    }

    /// The specializations a reading's device lists (``HealthModel/MetadataKey/mdcDeviceSpecializations``,
    /// `code:version`, comma-separated), each as its 32-bit code: a 16-bit term code is in
    /// partition 8, MDC_PART_INFRA (Nomenclaturecodes.md: "the encoder must convert the 16-bit
    /// value"). Unreadable entries are left out.
    static func listedSpecializations(_ metadata: Metadata) -> [(code: UInt32, version: String)] {
        (metadata[.mdcDeviceSpecializations]?.textValue ?? "").split(separator: ",").compactMap { entry in
            let parts = entry.split(separator: ":").map { $0.filter { !$0.isWhitespace } }
            guard parts.count == 2, let code = UInt32(parts[0]), !parts[1].isEmpty else { return nil }
            return (code < 1 << 16 ? PHDGuide.specializationPartition << 16 | code : code, parts[1])
        }
    }

    /// Whether the form has a code for readings of the type named `identifier` (a deletion
    /// names only its type): a row of the table, or a generic observation.
    static func hasCode(typeIdentifier identifier: String) -> Bool {
        if identifier == CorrelationType.bloodPressure.identifier { return true }
        guard let type = QuantityType.named(identifier) else { return false }
        return observationCode(type, metadata: Metadata()) != nil
    }

    /// An MDC coding: the code, and its reference identifier as `display` when the table knows
    /// it (Nomenclaturecodes.md: optional, encouraged).
    static func coding(_ code: UInt32, reference: String? = nil) -> JSONValue {
        var coding: [String: JSONValue] = ["system": .string(PHDGuide.mdcSystem), "code": .string(String(code))]
        if let display = reference ?? MDCNomenclature.reference(code) { coding["display"] = .string(display) }
        return .object(coding)
    }

    /// The R4 vital-signs code of a reading with MDC code `code` of `type`: the vital sign the
    /// code's row names (a generic `mdc.151562.2784` is a respiratory rate), else the type's.
    static func vitalSign(code: UInt32, type: QuantityType) -> FHIRMapping.Code? {
        FHIRMapping.vitalSign(MDCNomenclature.observation(code)?.type ?? type)
    }

    /// The unit a value is sent in: a UCUM code and the gateway's unit to convert into, or, for
    /// a unit code the table does not know, the MDC unit code itself and the value as stored.
    struct SentUnit: Hashable {
        /// `Quantity.system`: UCUM, or MDC for a unit the table has no UCUM code for.
        var system: String
        /// `Quantity.code`.
        var code: String
        /// The unit the value is converted into; nil: the value as it is stored (a generic
        /// observation in a unit the table does not know keeps the device's number).
        var unit: HealthUnit?

        init(_ row: MDCNomenclature.Unit) {
            (system, code, unit) = (PHDGuide.ucumSystem, row.ucum, row.unit)
        }

        init(mdcUnitCode: UInt16) {
            // The 32-bit code of a partition 4 (MDC_PART_DIM) term.
            (system, code, unit) = (PHDGuide.mdcSystem, String(UInt32(4) << 16 | UInt32(mdcUnitCode)), nil)
        }

        /// The Quantity's fields: value, UCUM (or MDC) code and system, the code as `unit`.
        func quantity(_ value: Double) -> JSONValue {
            var fields: [String: JSONValue] = ["value": .number(value), "system": .string(system), "code": .string(code)]
            if system == PHDGuide.ucumSystem { fields["unit"] = .string(code) }
            return .object(fields)
        }

        /// `quantity` in this unit; nil when it does not convert (it always does for a unit
        /// chosen for its type).
        func value(of quantity: Quantity) -> Double? {
            guard let unit else { return quantity.value }
            return try? quantity.doubleValue(for: unit)
        }
    }

    /// The unit of a reading of `type`: the unit the device sent (``HealthModel/MetadataKey/mdcUnit``,
    /// or a generic observation's unit code) when the table has its UCUM code and it fits the
    /// type, its MDC code when the table does not know it (DIMtoFHIRMapping.md, "Measurement
    /// Units": the MDC code where no UCUM code is known); else the type's unit in the table:
    /// ``preferredUnits``, or the row of the type's canonical unit. nil when the table has none.
    static func unit(_ type: QuantityType, metadata: Metadata) -> SentUnit? {
        let sent = metadata[.mdcUnit]?.textValue.flatMap({ UInt16($0) }) ?? MDCNomenclature.genericCodes(type.identifier)?.unit
        if let sent {
            if let row = MDCNomenclature.unit(sent), type.accepts(row.unit) { return SentUnit(row) }
            if MDCNomenclature.unit(sent) == nil, MDCNomenclature.genericCodes(type.identifier) != nil {
                return SentUnit(mdcUnitCode: sent)
            }
        }
        if let reference = preferredUnits[type.identifier], let row = MDCNomenclature.units.first(where: { $0.reference == reference }) {
            return SentUnit(row)
        }
        return MDCNomenclature.unitCode(for: type.canonicalUnit).map(SentUnit.init)
    }

    /// The unit of the types whose canonical unit's row is not the one to send, by the unit's
    /// reference in the table: a BMI is in `count`, whose first row is MDC_DIM_DIMLESS (`1`),
    /// but is kg/m², as the R4 BMI profile requires (`kg/m2`); a height is in metres, but the
    /// R4 body-height profile takes only `cm` or `[in_i]` (its ucum-bodylength binding).
    static let preferredUnits: [String: String] = [
        QuantityType.bodyMassIndex.identifier: "MDC_DIM_KG_PER_M_SQ",
        QuantityType.height.identifier: "MDC_DIM_CENTI_M",
    ]
}

/// The IEEE 11073-10101 nomenclature (MDC codes) the gateway knows: which observation codes are
/// which sample type, and which unit codes are which unit. Declared once, here: the Generic Health
/// Sensor source maps a device's observations with it, and a receiver that speaks MDC (the HL7
/// Personal Health Device form) derives its codes from the same rows.
///
/// A code is the 32-bit context-free code, partition × 65 536 + term code
/// (MDC_PULS_OXIM_SAT_O2 = 2 × 65 536 + 19 384 = 150 456). Unit codes are the 16-bit term codes of
/// partition 4 (MDC_PART_DIM), as a Generic Health Sensor sends them.
public enum MDCNomenclature {
    /// An observation code the gateway records as a sample type.
    public struct Observation: Hashable, Sendable {
        /// The context-free code.
        public let code: UInt32
        /// The reference identifier (`MDC_PULS_OXIM_SAT_O2`).
        public let reference: String
        /// The sample type its readings are.
        public let type: QuantityType
    }

    /// A unit code, with its UCUM form and the gateway's unit.
    public struct Unit: Hashable, Sendable {
        /// The term code in partition 4.
        public let code: UInt16
        /// The reference identifier (`MDC_DIM_PERCENT`).
        public let reference: String
        /// The UCUM code (`%`, `mm[Hg]`, `Cel`).
        public let ucum: String
        /// The gateway's unit, which converts to the type's canonical unit.
        public let unit: HealthUnit
    }

    /// The blood-pressure compound (MDC_PRESS_BLD_NONINV): its systolic and diastolic members
    /// make a `bloodPressure` correlation; the mean arterial pressure is kept in its metadata.
    public static let nonInvasiveBloodPressure: UInt32 = 150_020
    /// MDC_PRESS_BLD_NONINV_MEAN, the compound's member the correlation has no sample for.
    public static let nonInvasiveBloodPressureMean: UInt32 = 150_023

    /// Every observation code with a sample type. A type may have several codes (a pulse rate
    /// from an oximeter, a cuff or an ECG is `heartRate`); the first row of a type is the code a
    /// receiver is sent for it.
    public static let observations: [Observation] = [
        Observation(code: 150_456, reference: "MDC_PULS_OXIM_SAT_O2", type: .oxygenSaturation),
        Observation(code: 149_530, reference: "MDC_PULS_OXIM_PULS_RATE", type: .heartRate),
        Observation(code: 149_546, reference: "MDC_PULS_RATE_NON_INV", type: .heartRate),
        Observation(code: 147_842, reference: "MDC_ECG_HEART_RATE", type: .heartRate),
        Observation(code: 150_488, reference: "MDC_PULS_OXIM_PERF_REL", type: .peripheralPerfusionIndex),
        Observation(code: 150_021, reference: "MDC_PRESS_BLD_NONINV_SYS", type: .bloodPressureSystolic),
        Observation(code: 150_022, reference: "MDC_PRESS_BLD_NONINV_DIA", type: .bloodPressureDiastolic),
        Observation(code: 150_364, reference: "MDC_TEMP_BODY", type: .bodyTemperature),
        Observation(code: 188_736, reference: "MDC_MASS_BODY_ACTUAL", type: .bodyMass),
        Observation(code: 188_740, reference: "MDC_LEN_BODY_ACTUAL", type: .height),
        Observation(code: 188_752, reference: "MDC_RATIO_MASS_BODY_LEN_SQ", type: .bodyMassIndex),
        Observation(code: 188_748, reference: "MDC_BODY_FAT", type: .bodyFatPercentage),
        Observation(code: 160_184, reference: "MDC_CONC_GLU_CAPILLARY_WHOLEBLOOD", type: .bloodGlucose),
        Observation(code: 160_188, reference: "MDC_CONC_GLU_CAPILLARY_PLASMA", type: .bloodGlucose),
        Observation(code: 151_562, reference: "MDC_RESP_RATE", type: .respiratoryRate),
    ]

    /// Every unit code the gateway converts.
    public static let units: [Unit] = [
        Unit(code: 512, reference: "MDC_DIM_DIMLESS", ucum: "1", unit: .count),
        Unit(code: 544, reference: "MDC_DIM_PERCENT", ucum: "%", unit: .percent),
        Unit(code: 2720, reference: "MDC_DIM_BEAT_PER_MIN", ucum: "/min", unit: .countPerMinute),
        Unit(code: 2784, reference: "MDC_DIM_RESP_PER_MIN", ucum: "/min", unit: .countPerMinute),
        Unit(code: 3872, reference: "MDC_DIM_MMHG", ucum: "mm[Hg]", unit: .millimeterOfMercury),
        Unit(code: 3843, reference: "MDC_DIM_KILO_PASCAL", ucum: "kPa", unit: .kilopascal),
        Unit(code: 6048, reference: "MDC_DIM_DEGC", ucum: "Cel", unit: .degreeCelsius),
        Unit(code: 4416, reference: "MDC_DIM_FAHR", ucum: "[degF]", unit: .degreeFahrenheit),
        Unit(code: 1731, reference: "MDC_DIM_KILO_G", ucum: "kg", unit: .kilogram),
        Unit(code: 1760, reference: "MDC_DIM_LB", ucum: "[lb_av]", unit: .pound),
        Unit(code: 1280, reference: "MDC_DIM_X_M", ucum: "m", unit: .meter),
        Unit(code: 1297, reference: "MDC_DIM_CENTI_M", ucum: "cm", unit: .centimeter),
        Unit(code: 1376, reference: "MDC_DIM_INCH", ucum: "[in_i]", unit: .inch),
        Unit(code: 1952, reference: "MDC_DIM_KG_PER_M_SQ", ucum: "kg/m2", unit: .count),
        Unit(code: 2130, reference: "MDC_DIM_MILLI_G_PER_DL", ucum: "mg/dL", unit: .milligramPerDeciliter),
        Unit(code: 4722, reference: "MDC_DIM_MILLI_MOLE_PER_L", ucum: "mmol/L", unit: .millimolePerLiterOfGlucose),
        Unit(code: 2176, reference: "MDC_DIM_SEC", ucum: "s", unit: .second),
        Unit(code: 2194, reference: "MDC_DIM_MILLI_SEC", ucum: "ms", unit: .millisecond),
        Unit(code: 4274, reference: "MDC_DIM_MILLI_VOLT", ucum: "mV", unit: .millivolt),
    ]

    private static let observationsByCode = Dictionary(observations.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })
    private static let unitsByCode = Dictionary(units.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })

    /// The reference identifier of a code the gateway knows: a sample type's, a compound's (the
    /// blood pressure and its mean), or a device specialization's; nil for any other.
    public static func reference(_ code: UInt32) -> String? {
        switch code {
        case nonInvasiveBloodPressure: "MDC_PRESS_BLD_NONINV"
        case nonInvasiveBloodPressureMean: "MDC_PRESS_BLD_NONINV_MEAN"
        default: observation(code)?.reference ?? MDCDeviceSpecialization(code: code)?.referenceIdentifier
        }
    }

    /// The row of an observation code, or nil when the gateway has no sample type for it.
    public static func observation(_ code: UInt32) -> Observation? { observationsByCode[code] }

    /// The row of a unit code, or nil when the gateway does not know it.
    public static func unit(_ code: UInt16) -> Unit? { unitsByCode[code] }

    /// The code a receiver is sent for a sample type: its first row, or nil when it has none.
    public static func code(for type: QuantityType) -> Observation? {
        observations.first { $0.type == type }
    }

    /// The unit code of the gateway's unit `unit` (its first row), or nil.
    public static func unitCode(for unit: HealthUnit) -> Unit? {
        units.first { $0.unit == unit }
    }

    // MARK: Generic observations

    /// The prefix of a generic observation's type identifier.
    public static let genericPrefix = "mdc."

    /// The type code of an observation sent without one (0, which no MDC term of an observation
    /// uses): `mdc.0.{unit}`, kept with its text, attributes or samples rather than dropped.
    public static let untypedObservation: UInt32 = 0

    /// The type of an observation the gateway has no sample type for: `mdc.{observation}.{unit}`,
    /// both codes in decimal, so that it is stored, queried and sent with its code and unit, never
    /// dropped. Its canonical unit is the unit code's when the gateway knows it (so values convert
    /// as any other), else `count`: the value as the device sent it, its unit named by the code in
    /// the identifier. Discrete, two decimals.
    public static func genericType(observation: UInt32, unit: UInt16) -> QuantityType {
        QuantityType(
            identifier: "\(genericPrefix)\(observation).\(unit)", canonicalUnit: Self.unit(unit)?.unit ?? .count,
            aggregationStyle: .discrete, fractionDigits: 2)
    }

    /// The generic observation's type named `identifier`, or nil when it is not one.
    public static func genericType(named identifier: String) -> QuantityType? {
        guard let codes = genericCodes(identifier) else { return nil }
        return genericType(observation: codes.observation, unit: codes.unit)
    }

    /// The observation and unit codes of a generic observation's type identifier, or nil.
    public static func genericCodes(_ identifier: String) -> (observation: UInt32, unit: UInt16)? {
        guard identifier.hasPrefix(genericPrefix) else { return nil }
        let parts = identifier.dropFirst(genericPrefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let observation = UInt32(parts[0]), let unit = UInt16(parts[1]),
            "\(observation).\(unit)" == identifier.dropFirst(genericPrefix.count)
        else { return nil }
        return (observation, unit)
    }
}

/// The fields of one Fitness Machine data characteristic, grouped by the flag bit that
/// announces them, in wire order.
public struct FitnessMachineLayout: Hashable, Sendable {
    /// One flag bit and the fields it announces, in wire order.
    public struct Group: Hashable, Sendable {
        /// The flag bit (0–15).
        public var bit: Int
        /// The fields, each with its format.
        public var fields: [Field]
    }

    /// A field and its format.
    public struct Field: Hashable, Sendable {
        /// Which field.
        public var field: FitnessMachineField
        /// Its format.
        public var format: FieldFormat
    }

    /// Which characteristic this layout decodes.
    public var characteristic: FitnessCharacteristic
    /// Groups in wire order. Bit 0 is "More Data" and inverted: its group is present when the
    /// bit is 0 (FTMS v1.0, the Flags field of each data characteristic).
    public var groups: [Group]

    /// The bits that announce fields: every group's bit except bit 0.
    public var fieldBits: UInt16 {
        groups.reduce(0) { $1.bit == 0 ? $0 : $0 | 1 << UInt16($1.bit) }
    }

    /// Whether `flags` announce the group with this bit.
    public static func isPresent(bit: Int, flags: UInt16) -> Bool {
        bit == 0 ? flags & 1 == 0 : flags & (1 << UInt16(bit)) != 0
    }

    private static func group(_ bit: Int, _ fields: (FitnessMachineField, FieldFormat)...) -> Group {
        Group(bit: bit, fields: fields.map { Field(field: $0.0, format: $0.1) })
    }

    /// Treadmill Data (0x2ACD), FTMS v1.0 (Treadmill Data).
    public static let treadmill = FitnessMachineLayout(
        characteristic: .treadmillData,
        groups: [
            group(0, (.instantaneousSpeed, .uint16)),  // 0.01 km/h
            group(1, (.averageSpeed, .uint16)),  // 0.01 km/h
            group(2, (.totalDistance, .uint24)),  // m
            group(3, (.inclination, .sint16), (.rampAngleSetting, .sint16)),  // 0.1 %, 0.1°
            group(4, (.positiveElevationGain, .uint16), (.negativeElevationGain, .uint16)),  // 0.1 m
            group(5, (.instantaneousPace, .uint8)),  // 0.1 km/min
            group(6, (.averagePace, .uint8)),  // 0.1 km/min
            group(7, (.totalEnergy, .uint16), (.energyPerHour, .uint16), (.energyPerMinute, .uint8)),  // kcal
            group(8, (.heartRate, .uint8)),  // bpm
            group(9, (.metabolicEquivalent, .uint8)),  // 0.1
            group(10, (.elapsedTime, .uint16)),  // s
            group(11, (.remainingTime, .uint16)),  // s
            group(12, (.forceOnBelt, .sint16), (.powerOutput, .sint16)),  // N, W
        ])

    /// Indoor Bike Data (0x2AD2), FTMS v1.0 (Indoor Bike Data).
    public static let indoorBike = FitnessMachineLayout(
        characteristic: .indoorBikeData,
        groups: [
            group(0, (.instantaneousSpeed, .uint16)),  // 0.01 km/h
            group(1, (.averageSpeed, .uint16)),  // 0.01 km/h
            group(2, (.instantaneousCadence, .uint16)),  // 0.5 /min
            group(3, (.averageCadence, .uint16)),  // 0.5 /min
            group(4, (.totalDistance, .uint24)),  // m
            group(5, (.resistanceLevel, .sint16)),  // unitless
            group(6, (.instantaneousPower, .sint16)),  // W
            group(7, (.averagePower, .sint16)),  // W
            group(8, (.totalEnergy, .uint16), (.energyPerHour, .uint16), (.energyPerMinute, .uint8)),  // kcal
            group(9, (.heartRate, .uint8)),  // bpm
            group(10, (.metabolicEquivalent, .uint8)),  // 0.1
            group(11, (.elapsedTime, .uint16)),  // s
            group(12, (.remainingTime, .uint16)),  // s
        ])

    /// Rower Data (0x2AD1), FTMS v1.0 (Rower Data).
    public static let rower = FitnessMachineLayout(
        characteristic: .rowerData,
        groups: [
            group(0, (.strokeRate, .uint8), (.strokeCount, .uint16)),  // 0.5 /min, count
            group(1, (.averageStrokeRate, .uint8)),  // 0.5 /min
            group(2, (.totalDistance, .uint24)),  // m
            group(3, (.instantaneousPace, .uint16)),  // s per 500 m
            group(4, (.averagePace, .uint16)),  // s per 500 m
            group(5, (.instantaneousPower, .sint16)),  // W
            group(6, (.averagePower, .sint16)),  // W
            group(7, (.resistanceLevel, .sint16)),  // unitless
            group(8, (.totalEnergy, .uint16), (.energyPerHour, .uint16), (.energyPerMinute, .uint8)),  // kcal
            group(9, (.heartRate, .uint8)),  // bpm
            group(10, (.metabolicEquivalent, .uint8)),  // 0.1
            group(11, (.elapsedTime, .uint16)),  // s
            group(12, (.remainingTime, .uint16)),  // s
        ])
}

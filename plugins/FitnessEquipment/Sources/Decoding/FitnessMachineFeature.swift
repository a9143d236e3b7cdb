public import GATTDecoding
/// Fitness Machine Feature (0x2ACC): which data fields and which targets a machine supports
/// (FTMS v1.0, Fitness Machine Feature): two uint32 fields, Fitness Machine Features then Target Setting Features.
public struct FitnessMachineFeature: Hashable, Sendable {
    /// Fitness Machine Features as sent.
    public var machineFeatures: UInt32
    /// Target Setting Features as sent.
    public var targetSettingFeatures: UInt32

    /// Creates the feature sets from raw values.
    public init(machineFeatures: UInt32, targetSettingFeatures: UInt32) {
        self.machineFeatures = machineFeatures
        self.targetSettingFeatures = targetSettingFeatures
    }

    /// Fitness Machine Features bits 0–16 (FTMS v1.0, Fitness Machine Features field).
    public static let machineFeatureNames: [String] = [
        "averageSpeed", "cadence", "totalDistance", "inclination", "elevationGain", "pace",
        "stepCount", "resistanceLevel", "strideCount", "expendedEnergy", "heartRateMeasurement",
        "metabolicEquivalent", "elapsedTime", "remainingTime", "powerMeasurement",
        "forceOnBeltAndPowerOutput", "userDataRetention",
    ]

    /// Target Setting Features bits 0–16 (FTMS v1.0, Target Setting Features field).
    public static let targetSettingNames: [String] = [
        "speedTarget", "inclinationTarget", "resistanceTarget", "powerTarget", "heartRateTarget",
        "targetedExpendedEnergy", "targetedStepNumber", "targetedStrideNumber", "targetedDistance",
        "targetedTrainingTime", "targetedTimeInTwoHeartRateZones", "targetedTimeInThreeHeartRateZones",
        "targetedTimeInFiveHeartRateZones", "indoorBikeSimulationParameters", "wheelCircumference",
        "spinDownControl", "targetedCadence",
    ]

    /// The names of the set, defined Fitness Machine Features bits, in bit order.
    public var supportedFeatures: [String] { Self.names(machineFeatures, Self.machineFeatureNames) }
    /// The names of the set, defined Target Setting Features bits, in bit order.
    public var supportedTargets: [String] { Self.names(targetSettingFeatures, Self.targetSettingNames) }

    private static func names(_ bits: UInt32, _ table: [String]) -> [String] {
        table.indices.compactMap { bits & (1 << UInt32($0)) != 0 ? table[$0] : nil }
    }
}

/// Decodes Fitness Machine Feature values. Pure.
public enum FitnessMachineFeatureDecoder {
    /// - Throws: ``FitnessDecodingError`` `.truncated` below eight bytes, `.unexpectedLength` above.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> FitnessMachineFeature {
        var reader = PayloadReader(payload, .fitnessMachineFeature)
        let machine = try reader.uint32("fitnessMachineFeatures")
        let targets = try reader.uint32("targetSettingFeatures")
        try reader.expectEnd()
        return FitnessMachineFeature(machineFeatures: machine, targetSettingFeatures: targets)
    }
}

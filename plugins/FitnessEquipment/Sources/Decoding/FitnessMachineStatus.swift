public import GATTDecoding
/// One Fitness Machine Status (0x2ADA) notification: an op code and its parameter
/// (FTMS v1.0, Fitness Machine Status).
public enum FitnessMachineStatus: Hashable, Sendable {
    /// 0x01: the machine was reset.
    case reset
    /// 0x02: stopped (parameter 0x01) or paused (0x02) by the user.
    case stoppedOrPausedByUser(paused: Bool)
    /// 0x03: stopped by the safety key.
    case stoppedBySafetyKey
    /// 0x04: started or resumed by the user.
    case startedOrResumedByUser
    /// 0x05: target speed changed, in m/s (sent as uint16 in 0.01 km/h).
    case targetSpeedChanged(metersPerSecond: Double)
    /// 0x06: target inclination changed, in percent (sint16 in 0.1 %).
    case targetInclineChanged(percent: Double)
    /// 0x07: target resistance level changed (uint8 in 0.1).
    case targetResistanceLevelChanged(Double)
    /// 0x08: target power changed, in W (sint16).
    case targetPowerChanged(watts: Int)
    /// 0x09: target heart rate changed, in beats per minute (uint8).
    case targetHeartRateChanged(beatsPerMinute: Int)
    /// 0x0A: targeted expended energy changed, in kcal (uint16).
    case targetedExpendedEnergyChanged(kilocalories: Int)
    /// 0x0D: targeted distance changed, in metres (uint24).
    case targetedDistanceChanged(meters: Int)
    /// 0x0E: targeted training time changed, in seconds (uint16).
    case targetedTrainingTimeChanged(seconds: Int)
    /// 0x12: indoor bike simulation parameters changed: wind speed (sint16, 0.001 m/s), grade
    /// (sint16, 0.01 %), rolling resistance coefficient (uint8, 0.0001), wind resistance
    /// coefficient (uint8, 0.01 kg/m).
    case indoorBikeSimulationParametersChanged(
        windSpeed: Double, grade: Double, rollingResistance: Double, windResistance: Double)
    /// 0x13: wheel circumference changed, in metres (uint16 in 0.1 mm).
    case wheelCircumferenceChanged(meters: Double)
    /// 0x15: targeted cadence changed, in revolutions per minute (uint16 in 0.5 /min).
    case targetedCadenceChanged(perMinute: Double)
    /// 0xFF: the client lost control permission.
    case controlPermissionLost
    /// Any other op code (including the step, stride and heart-rate-zone targets and spin down
    /// status), with its parameter bytes as sent.
    case other(opCode: UInt8, parameter: [UInt8])
}

/// Decodes Fitness Machine Status values. Pure.
public enum FitnessMachineStatusDecoder {
    /// Decodes one notification. Bytes after a known op code's parameter are ignored.
    /// - Throws: ``FitnessDecodingError`` `.truncated` naming the op code or its cut parameter.
    public static func decode(_ payload: [UInt8]) throws(FitnessDecodingError) -> FitnessMachineStatus {
        var reader = PayloadReader(payload, .fitnessMachineStatus)
        let opCode = try reader.uint8("opCode")
        switch opCode {
        case 0x01: return .reset
        case 0x02:
            return .stoppedOrPausedByUser(paused: try reader.uint8("controlInformation") == 0x02)
        case 0x03: return .stoppedBySafetyKey
        case 0x04: return .startedOrResumedByUser
        case 0x05: return .targetSpeedChanged(metersPerSecond: FitnessUnits.speed(Int(try reader.uint16("targetSpeed"))))
        case 0x06: return .targetInclineChanged(percent: FitnessUnits.tenths(Int(try reader.sint16("targetInclination"))))
        case 0x07:
            return .targetResistanceLevelChanged(FitnessUnits.tenths(Int(try reader.uint8("targetResistanceLevel"))))
        case 0x08: return .targetPowerChanged(watts: Int(try reader.sint16("targetPower")))
        case 0x09: return .targetHeartRateChanged(beatsPerMinute: Int(try reader.uint8("targetHeartRate")))
        case 0x0A:
            return .targetedExpendedEnergyChanged(kilocalories: Int(try reader.uint16("targetedExpendedEnergy")))
        case 0x0D: return .targetedDistanceChanged(meters: Int(try reader.unsigned(3, "targetedDistance")))
        case 0x0E: return .targetedTrainingTimeChanged(seconds: Int(try reader.uint16("targetedTrainingTime")))
        case 0x12:
            let wind = Double(try reader.sint16("windSpeed")) / 1000
            let grade = Double(try reader.sint16("grade")) / 100
            let rolling = Double(try reader.uint8("rollingResistanceCoefficient")) / 10_000
            let windResistance = Double(try reader.uint8("windResistanceCoefficient")) / 100
            return .indoorBikeSimulationParametersChanged(
                windSpeed: wind, grade: grade, rollingResistance: rolling, windResistance: windResistance)
        case 0x13:
            return .wheelCircumferenceChanged(meters: Double(try reader.uint16("wheelCircumference")) / 10_000)
        case 0x15: return .targetedCadenceChanged(perMinute: FitnessUnits.halves(Int(try reader.uint16("targetedCadence"))))
        case 0xFF: return .controlPermissionLost
        default: return .other(opCode: opCode, parameter: Array(payload.dropFirst()))
        }
    }
}

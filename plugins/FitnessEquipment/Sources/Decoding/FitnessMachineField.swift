/// A field of Treadmill Data, Indoor Bike Data or Rower Data, by its name in the JSON output.
///
/// The raw values are stored as sent; ``FitnessMachineLayout`` gives each field's format and
/// the typed records (``TreadmillData``, ``IndoorBikeData``, ``RowerData``) convert to SI units.
public enum FitnessMachineField: String, Hashable, Sendable, CaseIterable, Comparable {
    case instantaneousSpeed
    case averageSpeed
    case instantaneousCadence
    case averageCadence
    case strokeRate
    case strokeCount
    case averageStrokeRate
    case totalDistance
    case inclination
    case rampAngleSetting
    case positiveElevationGain
    case negativeElevationGain
    case instantaneousPace
    case averagePace
    case resistanceLevel
    case instantaneousPower
    case averagePower
    case totalEnergy
    case energyPerHour
    case energyPerMinute
    case heartRate
    case metabolicEquivalent
    case elapsedTime
    case remainingTime
    case forceOnBelt
    case powerOutput

    /// Declaration order, which follows the specifications' field order.
    public static func < (lhs: FitnessMachineField, rhs: FitnessMachineField) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

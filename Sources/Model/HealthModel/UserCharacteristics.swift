/// Biological sex, as HealthKit's `HKBiologicalSex` (the energy equation's coefficients).
public enum BiologicalSex: String, Hashable, Sendable, Codable, CaseIterable {
    case female, male, other
}

/// What the gateway knows of the person it measures, from the configuration's `profile`: the
/// figures a reading may depend on, as HealthKit gives an app the user's characteristics (a scale
/// that sends no height computes no body mass index without one). Every field may be unknown.
public struct UserCharacteristics: Sendable, Hashable {
    /// Height in metres.
    public var heightMeters: Double?
    /// Body mass in kilograms.
    public var weightKilograms: Double?
    /// `YYYY-MM-DD`.
    public var dateOfBirth: String?
    public var biologicalSex: BiologicalSex?

    public init(
        heightMeters: Double? = nil, weightKilograms: Double? = nil, dateOfBirth: String? = nil,
        biologicalSex: BiologicalSex? = nil
    ) {
        self.heightMeters = heightMeters
        self.weightKilograms = weightKilograms
        self.dateOfBirth = dateOfBirth
        self.biologicalSex = biologicalSex
    }
}

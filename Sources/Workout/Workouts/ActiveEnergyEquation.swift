public import HealthModel
public import FoundationEssentials

/// Energy expenditure from heart rate.
///
/// Keytel LR, Goedecke JH, Noakes TD, Hiiloskorpi H, Laukkanen R, van der Merwe L, Lambert EV
/// (2005). "Prediction of energy expenditure from heart rate monitoring during submaximal
/// exercise." Journal of Sports Sciences 23(3):289–297. We use the paper's equations without
/// VO2max (the profile does not know it), which give kJ per minute:
///
///     male:   EE = −55.0969 + 0.6309 × HR + 0.1988 × weight(kg) + 0.2017 × age(y)
///     female: EE = −20.4022 + 0.4472 × HR − 0.1263 × weight(kg) + 0.0740 × age(y)
///
/// and convert with 1 kcal = 4.184 kJ (the thermochemical calorie). The equations were fitted on
/// exercise heart rates (about 57–90 % of maximum); at rest they can go negative, so a minute's
/// estimate is clamped at zero. They estimate gross expenditure during exercise, which is what
/// we report as the workout's active energy.
public struct ActiveEnergyEquation: Hashable, Sendable {
    /// Body mass in kilograms.
    public var weightKilograms: Double
    /// Age in years.
    public var age: Double
    /// Only `.male` and `.female` have coefficients.
    public var sex: BiologicalSex

    /// The equation for a profile, or nil when weight, age or a sex with coefficients is missing.
    public init?(profile: UserProfile, on date: Date) {
        guard let weight = profile.weightKilograms, let age = profile.age(on: date),
            let sex = profile.biologicalSex, sex != .other
        else { return nil }
        self.init(weightKilograms: weight, age: Double(age), sex: sex)
    }

    /// An equation with explicit inputs. `sex` must be `.male` or `.female` for a non-nil rate.
    public init(weightKilograms: Double, age: Double, sex: BiologicalSex) {
        self.weightKilograms = weightKilograms
        self.age = age
        self.sex = sex
    }

    /// kJ per minute at `heartRate` bpm, clamped at zero; nil for `.other`.
    public func kilojoulesPerMinute(heartRate: Double) -> Double? {
        let value: Double
        switch sex {
        case .male: value = -55.0969 + 0.6309 * heartRate + 0.1988 * weightKilograms + 0.2017 * age
        case .female: value = -20.4022 + 0.4472 * heartRate - 0.1263 * weightKilograms + 0.0740 * age
        case .other: return nil
        }
        return max(0, value)
    }

    /// kcal over `seconds` at a steady `heartRate`.
    public func kilocalories(heartRate: Double, seconds: Double) -> Double? {
        kilojoulesPerMinute(heartRate: heartRate).map { $0 * seconds / 60 / 4.184 }
    }
}

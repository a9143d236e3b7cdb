public import HealthModel

/// Body fat and lean body mass from a Mi Body Composition Scale 2 weighing with its impedance,
/// by the estimate its app makes: reverse-engineered by prototux
/// (github.com/prototux/MIBCS-reverse-engineering) and published in openScale's `MiScaleLib`
/// (github.com/oliexdev/openScale, `core/bluetooth/libs/MiScaleLib.kt`, `getBodyFat`), written
/// here from the formula. Pure.
///
/// With height h in cm, weight w in kg, impedance R in ohms and age a in years:
/// `c = 9.058·(h/100)² + 0.32·w + 12.226 − 0.0068·R − 0.0542·a`;
/// `fat % = (1 − (c − s)·k / w) × 100`, where s is 0.8 for a man, 9.25 for a woman up to 49 and
/// 7.25 above; k is 0.98 for a man under 61 kg, 0.96 for a woman over 60 kg and 1.02 under 50 kg
/// (either ×1.03 above 160 cm), else 1. Lean body mass is the weight less the fat, as HealthKit's
/// `leanBodyMass` (openScale's `getLBM` also subtracts its bone-mass estimate; we do not).
public enum MiBodyComposition {
    /// The figures of one weighing.
    public struct Estimate: Sendable, Hashable {
        /// Body fat in percent of the weight.
        public let bodyFatPercentage: Double
        /// The weight less the fat, in kilograms.
        public let leanBodyMassKilograms: Double
    }

    /// The heights the formula is defined for. The upper bounds of these ranges are the ones the
    /// reverse-engineered library checks (prototux's `body_metrics.py`: height up to 220 cm,
    /// weight 10 … 200 kg, age up to 99, impedance up to 3000 ohms); the lower bounds of height,
    /// age and impedance are ours (an impedance of 0 is no measurement).
    public static let heightRangeMeters: ClosedRange<Double> = 0.5...2.2
    /// The weights the formula is defined for.
    public static let weightRangeKilograms: ClosedRange<Double> = 10...200
    /// The ages the formula is defined for.
    public static let ageRange: ClosedRange<Int> = 1...99
    /// The impedances the formula is defined for.
    public static let impedanceRange: ClosedRange<Int> = 1...3000
    /// The body fat the formula yields credibly: openScale replaces anything above 63 % with 75 %;
    /// we store nothing outside this range instead.
    public static let bodyFatRange: ClosedRange<Double> = 1...63

    /// The estimate for a person of `sex`, `age` years and `heightMeters` weighing
    /// `weightKilograms` at `impedance` ohms.
    /// - Returns: the estimate, or why there is none: an input outside the formula's range, a sex
    ///   the formula has no coefficients for (`other`), or a result outside ``bodyFatRange``.
    public static func estimate(
        weightKilograms weight: Double, impedance: Int, heightMeters: Double, age: Int, sex: BiologicalSex
    ) -> Result<Estimate, BodyCompositionOmission> {
        guard sex != .other else { return .failure(.unsupportedSex) }
        guard heightRangeMeters.contains(heightMeters) else { return .failure(.outOfRange("height \(heightMeters) m")) }
        guard weightRangeKilograms.contains(weight) else { return .failure(.outOfRange("weight \(weight) kg")) }
        guard ageRange.contains(age) else { return .failure(.outOfRange("age \(age)")) }
        guard impedanceRange.contains(impedance) else { return .failure(.outOfRange("impedance \(impedance) ohms")) }
        let male = sex == .male
        let centimeters = heightMeters * 100
        let coefficient =
            9.058 * heightMeters * heightMeters + 0.32 * weight + 12.226 - 0.0068 * Double(impedance) - 0.0542 * Double(age)
        let offset = male ? 0.8 : (age <= 49 ? 9.25 : 7.25)
        var factor = 1.0
        if male, weight < 61 {
            factor = 0.98
        } else if !male, weight > 60 {
            factor = 0.96 * (centimeters > 160 ? 1.03 : 1)
        } else if !male, weight < 50 {
            factor = 1.02 * (centimeters > 160 ? 1.03 : 1)
        }
        let fat = (1 - (coefficient - offset) * factor / weight) * 100
        guard bodyFatRange.contains(fat) else { return .failure(.outOfRange("body fat \(fat) %")) }
        return .success(Estimate(bodyFatPercentage: fat, leanBodyMassKilograms: weight * (1 - fat / 100)))
    }
}

/// Why a weighing gave no body composition (only `bodyMass`): reported once per scale and
/// reason in the log, and in status.
public enum BodyCompositionOmission: Error, Sendable, Hashable, CustomStringConvertible {
    /// The weighing carries no impedance (a Mi Smart Scale 2, or a body composition scale that
    /// measured none, e.g. with shoes on).
    case noImpedance
    /// Nobody is known to have stood on the scale (the reason says why).
    case nobody(String)
    /// The person's profile ("Ana's profile") lacks what the formula needs (the keys named).
    case incompleteProfile(profile: String, missing: [String])
    /// The formula has coefficients for female and male only.
    case unsupportedSex
    /// An input or the result lies outside the formula's range.
    case outOfRange(String)

    /// One sentence for the log and status.
    public var description: String {
        switch self {
        case .noImpedance: "the weighing carries no impedance"
        case .nobody(let reason): "nobody is known to have stood on the scale: \(reason)"
        case .incompleteProfile(let profile, let missing):
            "\(profile) lacks \(missing.joined(separator: ", ")) (body composition needs biologicalSex, dateOfBirth and heightMeters)"
        case .unsupportedSex: "the formula has coefficients for female and male only"
        case .outOfRange(let what): "\(what) is outside the formula's range"
        }
    }
}

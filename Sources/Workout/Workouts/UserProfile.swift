public import FoundationEssentials
public import GatewayRuntime
public import HealthModel

/// One heart-rate zone as written in the profile: bounds in percent of the maximum heart rate,
/// or in beats per minute. Exactly one pair must be given (``UserProfile/validate()``; the
/// schema's two forms, ``UserProfile/zoneSchema``).
public struct HeartRateZoneSpecification: Hashable, Sendable, Encodable, DeclaredConfiguration {
    /// Lower bound in percent of the maximum heart rate.
    public var lowerPercent: Double?
    /// Upper bound in percent of the maximum heart rate.
    public var upperPercent: Double?
    /// Lower bound in beats per minute.
    public var lowerBPM: Double?
    /// Upper bound in beats per minute.
    public var upperBPM: Double?

    /// No bounds.
    public init() {}

    /// Creates a value; no validation (see `validate()` and `decode(_:)`).
    public init(lowerPercent: Double? = nil, upperPercent: Double? = nil, lowerBPM: Double? = nil, upperBPM: Double? = nil) {
        self.lowerPercent = lowerPercent
        self.upperPercent = upperPercent
        self.lowerBPM = lowerBPM
        self.upperBPM = upperBPM
    }

    /// Every key of a zone.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("lowerPercent", \.lowerPercent, .number(UserProfile.zonePercentRule), "The zone's lower bound"),
            ConfigurationKey("upperPercent", \.upperPercent, .number(UserProfile.zonePercentRule), "The zone's upper bound, above the lower"),
            ConfigurationKey("lowerBPM", \.lowerBPM, .number(UserProfile.zoneBPMRule), "The zone's lower bound"),
            ConfigurationKey("upperBPM", \.upperBPM, .number(UserProfile.zoneBPMRule), "The zone's upper bound, above the lower"),
        ]
    }
}

/// The user profile for workouts: the `profile` object of the gateway configuration.
///
/// ```json
/// "profile": {
///   "maximumHeartRate": 185,        // optional; else from dateOfBirth (Tanaka 2001)
///   "dateOfBirth": "1990-04-01",    // YYYY-MM-DD
///   "weightKilograms": 70,
///   "heightMeters": 1.72,           // optional; a scale that sends no height gets BMI from it
///   "biologicalSex": "female",      // female | male | other
///   "zones": [{"lowerPercent": 50, "upperPercent": 60}, …],   // optional, default five zones
///   "gapThresholdSeconds": 10       // optional: no heart rate for longer than this is a gap
/// }
/// ```
/// Every key is optional. What is missing makes the dependent figure unavailable (zones, energy),
/// never guessed.
public struct UserProfile: Hashable, Sendable, Encodable, DeclaredConfiguration {
    /// Measured maximum heart rate in bpm; overrides the age estimate.
    public var maximumHeartRate: Double?
    /// `YYYY-MM-DD`.
    public var dateOfBirth: String?
    /// Body mass in kilograms, for the energy equation.
    public var weightKilograms: Double?
    /// Height in metres: the body mass index of a scale that sends no height of its own.
    public var heightMeters: Double?
    /// For the energy equation's coefficients.
    public var biologicalSex: BiologicalSex?
    /// Custom zones; nil uses `defaultZones`.
    public var zones: [HeartRateZoneSpecification]?
    /// Seconds without heart rate that make a gap; nil uses the default.
    public var gapThresholdSeconds: Double?

    /// An empty profile: every figure unknown, the default zones and gap threshold.
    public init() {}

    /// Creates a value; no validation (see `validate()` and `decode(_:)`).
    public init(
        maximumHeartRate: Double? = nil, dateOfBirth: String? = nil, weightKilograms: Double? = nil,
        heightMeters: Double? = nil, biologicalSex: BiologicalSex? = nil, zones: [HeartRateZoneSpecification]? = nil,
        gapThresholdSeconds: Double? = nil
    ) {
        self.maximumHeartRate = maximumHeartRate
        self.dateOfBirth = dateOfBirth
        self.weightKilograms = weightKilograms
        self.heightMeters = heightMeters
        self.biologicalSex = biologicalSex
        self.zones = zones
        self.gapThresholdSeconds = gapThresholdSeconds
    }

    /// What plugins may know of the user (``PluginEnvironment/user``): the body's figures, not the
    /// workout settings.
    public var characteristics: UserCharacteristics {
        UserCharacteristics(
            heightMeters: heightMeters, weightKilograms: weightKilograms, dateOfBirth: dateOfBirth,
            biologicalSex: biologicalSex)
    }

    /// The default gap threshold: a heart-rate strap notifies about once a second, so ten seconds
    /// without a reading means the link or the contact was lost.
    public static let defaultGapThresholdSeconds = 10.0

    /// The default zones: 50–60, 60–70, 70–80, 80–90 and 90–100 % of the maximum heart rate.
    public static let defaultZones: [HeartRateZoneSpecification] = stride(from: 50.0, to: 100, by: 10).map {
        HeartRateZoneSpecification(lowerPercent: $0, upperPercent: $0 + 10)
    }

    /// Decodes and validates the configuration's `profile` value; nil gives an empty profile.
    /// - Throws: ``WorkoutError`` with code ``WorkoutError/Code/invalidProfile`` naming the key
    ///   (`profile.weightKilograms`) and the reason.
    public static func decode(_ value: JSONValue?) throws(WorkoutError) -> UserProfile {
        guard let value, value != .null else { return UserProfile() }
        let profile: UserProfile
        do {
            // Strict, as every configuration object: a misspelt key is an error, not a default.
            profile = try value.decodeStrictly(UserProfile.self)
        } catch let error as DecodingError {
            let path = ConfigurationKeyPath.joining("profile", error.keyPath)
            throw WorkoutError(.invalidProfile, "\(path): \(error.reason)", keyPath: path)
        } catch {
            throw WorkoutError(.invalidProfile, "profile: \(error)")
        }
        try profile.validate()
        return profile
    }

    /// Checks ranges and formats.
    /// - Throws: ``WorkoutError`` (``WorkoutError/Code/invalidProfile``) naming the key.
    public func validate() throws(WorkoutError) {
        func fail(_ key: String, _ reason: String) -> WorkoutError {
            WorkoutError(.invalidProfile, "profile.\(key): \(reason)", keyPath: "profile.\(key)")
        }
        for (key, value, rule) in [
            ("maximumHeartRate", maximumHeartRate, Self.maximumHeartRateRule), ("weightKilograms", weightKilograms, Self.weightRule),
            ("heightMeters", heightMeters, Self.heightRule), ("gapThresholdSeconds", gapThresholdSeconds, Self.gapThresholdRule),
        ] {
            if let value, let problem = rule.problem(with: value) { throw fail(key, problem) }
        }
        if let dateOfBirth, Self.birthDate(dateOfBirth) == nil {
            throw fail("dateOfBirth", "\"\(dateOfBirth)\" is not a date like 1990-04-01")
        }
        if let zones {
            guard !zones.isEmpty else { throw fail("zones", "must list at least one zone") }
            var previousUpper = -Double.infinity
            for (index, zone) in zones.enumerated() {
                let bounds: (Double, Double)
                switch (zone.lowerPercent, zone.upperPercent, zone.lowerBPM, zone.upperBPM) {
                case (let lower?, let upper?, nil, nil): bounds = (lower, upper)
                case (nil, nil, let lower?, let upper?): bounds = (lower, upper)
                default:
                    throw fail("zones[\(index)]", "give lowerPercent and upperPercent, or lowerBPM and upperBPM")
                }
                let rule = zone.lowerPercent != nil ? Self.zonePercentRule : Self.zoneBPMRule
                if let problem = rule.problem(with: bounds.0) ?? rule.problem(with: bounds.1) {
                    throw fail("zones[\(index)]", problem)
                }
                guard bounds.0 < bounds.1 else {
                    throw fail("zones[\(index)]", "lower bound must be below the upper bound")
                }
                guard bounds.0 >= previousUpper else {
                    throw fail("zones[\(index)]", "zones must be in ascending order without overlap")
                }
                previousUpper = bounds.1
            }
            let percent = zones.filter { $0.lowerPercent != nil }.count
            guard percent == 0 || percent == zones.count else {
                throw fail("zones", "use percent bounds for every zone or BPM bounds for every zone")
            }
        }
    }

    /// The gap threshold in seconds.
    public var gapThreshold: Double { gapThresholdSeconds ?? Self.defaultGapThresholdSeconds }

    /// The age in whole years on `date`, if the date of birth is known.
    public func age(on date: Date) -> Int? { characteristics.age(on: date) }

    /// The maximum heart rate on `date`: the profile's value, else Tanaka, Monahan & Seals (2001),
    /// "Age-predicted maximal heart rate revisited", J Am Coll Cardiol 37(1):153–156:
    /// HRmax = 208 − 0.7 × age. Nil when neither is known.
    public func maximumHeartRate(on date: Date) -> Double? {
        if let maximumHeartRate { return maximumHeartRate }
        guard let age = age(on: date) else { return nil }
        return 208 - 0.7 * Double(age)
    }

    /// The zones resolved to beats per minute on `date`; nil when the zones are in percent and
    /// the maximum heart rate is unknown.
    public func heartRateZones(on date: Date) -> HeartRateZones? {
        let specifications = zones ?? Self.defaultZones
        let maximum = maximumHeartRate(on: date)
        var resolved: [HeartRateZone] = []
        for (index, zone) in specifications.enumerated() {
            if let lower = zone.lowerBPM, let upper = zone.upperBPM {
                resolved.append(HeartRateZone(number: index + 1, lowerBPM: lower, upperBPM: upper))
            } else if let lower = zone.lowerPercent, let upper = zone.upperPercent {
                guard let maximum else { return nil }
                resolved.append(HeartRateZone(
                    number: index + 1, lowerBPM: maximum * lower / 100, upperBPM: maximum * upper / 100))
            }
        }
        return HeartRateZones(maximumHeartRate: maximum, zones: resolved)
    }

    static func birthDate(_ text: String) -> (year: Int, month: Int, day: Int)? {
        UserCharacteristics.birthDate(text)
    }
}

extension UserProfile {
    /// The accepted `maximumHeartRate`.
    public static let maximumHeartRateRule = NumberRule(range: 60...260, unit: "beats per minute", whole: false)
    /// The accepted `weightKilograms`.
    public static let weightRule = NumberRule(range: 20...400, unit: "kilograms", whole: false)
    /// The accepted `heightMeters`.
    public static let heightRule = NumberRule(range: 0.5...2.6, unit: "metres", whole: false)
    /// The accepted `gapThresholdSeconds`.
    public static let gapThresholdRule = NumberRule(range: 0.1...3600, unit: "seconds", whole: false)
    /// The accepted zone bounds in percent of the maximum heart rate.
    public static let zonePercentRule = NumberRule(range: 0...100, unit: "percent of the maximum heart rate", whole: false)
    /// The accepted zone bounds in beats per minute.
    public static let zoneBPMRule = NumberRule(range: 0...300, unit: "beats per minute", whole: false)

    /// Every key of a `profile` object.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "maximumHeartRate", \.maximumHeartRate, .number(maximumHeartRateRule),
                "The measured maximum heart rate; absent: estimated from dateOfBirth"),
            ConfigurationKey("dateOfBirth", \.dateOfBirth, .string(pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"), "YYYY-MM-DD: the age for the maximum heart rate, the energy equation and a body composition scale"),
            ConfigurationKey("weightKilograms", \.weightKilograms, .number(weightRule), "Body mass, for the energy equation (and whose weighing a shared scale's is)"),
            ConfigurationKey("heightMeters", \.heightMeters, .number(heightRule), "Height, for the body mass index of a scale that sends none and a body composition scale's estimate"),
            ConfigurationKey(
                "biologicalSex", \.biologicalSex, .string(values: BiologicalSex.allCases.map(\.rawValue)),
                "For the coefficients of the energy equation and of a body composition scale's estimate"),
            ConfigurationKey(
                "zones", \.zones, .array(zoneSchema, minItems: 1),
                "Heart-rate zones in ascending order without overlap, all in percent or all in beats per minute; absent: five zones of 10 %"),
            ConfigurationKey(
                "gapThresholdSeconds", \.gapThresholdSeconds, .number(gapThresholdRule), default: defaultGapThresholdSeconds,
                "No heart rate for longer than this is a gap"),
        ]
    }

    /// A zone's two forms: both bounds in percent, or both in beats per minute.
    public static var zoneSchema: ConfigurationSchema {
        let keys = HeartRateZoneSpecification.configurationObject(defaults: HeartRateZoneSpecification()).properties
        return .oneOf([["lowerPercent", "upperPercent"], ["lowerBPM", "upperBPM"]].map { form in
            .object(keys.filter { form.contains($0.name) }, required: form)
        })
    }
}

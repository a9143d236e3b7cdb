public import FoundationEssentials
public import HealthModel

/// Who stood on a scale, for the figures that depend on the person (body composition). Pure:
/// weighings in, a person or the reason there is none out.
///
/// 1. A participant who wears the scale (the scale's address, name or id in their `devices`,
///    or assigned to them with `healthgate participant assign` before the start) is the one.
/// 2. Without any participant configured, the configuration's `profile` is the person (a home
///    gateway: one user).
/// 3. A scale no participant wears is shared: the weighing goes to the participant whose last
///    weight (their last weighing on this source in this run, else their profile's
///    `weightKilograms`) is nearest, if it is within ``sharedScaleTolerance``; two equally near,
///    or none near enough, is nobody.
public struct ScaleUsers: Sendable {
    /// One who stood on the scale.
    public struct Person: Sendable, Hashable {
        /// The participant's name; nil for the configuration's `profile`.
        public let name: String?
        /// Their profile's figures.
        public let characteristics: UserCharacteristics

        /// Whose profile, for logs: "Ana's profile", or "the configuration's profile".
        public var profileLabel: String { name.map { "\($0)'s profile" } ?? "the configuration's profile" }

        /// A person: a participant's name (nil for the configuration's `profile`) and figures.
        public init(name: String?, characteristics: UserCharacteristics) {
            self.name = name
            self.characteristics = characteristics
        }
    }

    /// How far a weighing on a shared scale may be from a participant's last weight.
    public static let sharedScaleTolerance = 3.0

    let participants: [ParticipantCharacteristics]
    let user: UserCharacteristics
    var lastWeights: [String: Double] = [:]

    /// The people `participants` and `user` (the configuration's `profile`) describe.
    public init(participants: [ParticipantCharacteristics], user: UserCharacteristics) {
        self.participants = participants
        self.user = user
    }

    /// Who weighed `kilograms` on `scale`; remembers it as their last weight.
    public mutating func person(on scale: Device, weighing kilograms: Double) -> Result<Person, BodyCompositionOmission> {
        if let wearer = participants.first(where: { Device.matches(scale, selection: $0.devices) }) {
            lastWeights[wearer.name] = kilograms
            return .success(Person(name: wearer.name, characteristics: wearer.characteristics))
        }
        guard !participants.isEmpty else { return .success(Person(name: nil, characteristics: user)) }
        let distances = participants.compactMap { participant -> (ParticipantCharacteristics, Double)? in
            guard let last = lastWeights[participant.name] ?? participant.characteristics.weightKilograms else { return nil }
            return (participant, abs(last - kilograms))
        }.sorted { $0.1 < $1.1 }
        guard let nearest = distances.first, nearest.1 <= Self.sharedScaleTolerance else {
            return .failure(
                .nobody(
                    "no participant wears the scale, and no participant's last weight is within \(Self.sharedScaleTolerance) kg of \(kilograms) kg"
                ))
        }
        if distances.count > 1, distances[1].1 == nearest.1 {
            return .failure(.nobody("\(nearest.0.name) and \(distances[1].0.name) last weighed equally near \(kilograms) kg"))
        }
        lastWeights[nearest.0.name] = kilograms
        return .success(Person(name: nearest.0.name, characteristics: nearest.0.characteristics))
    }

    /// The body composition of `reading` for `person` on `date` (their age then), or why there
    /// is none.
    public static func composition(
        of reading: MiScaleReading, for person: Person, on date: Date
    ) -> Result<MiBodyComposition.Estimate, BodyCompositionOmission> {
        guard let impedance = reading.impedance else { return .failure(.noImpedance) }
        let figures = person.characteristics
        let age = figures.age(on: date)
        var missing: [String] = []
        if figures.biologicalSex == nil { missing.append("biologicalSex") }
        if age == nil { missing.append("dateOfBirth") }
        if figures.heightMeters == nil { missing.append("heightMeters") }
        guard let sex = figures.biologicalSex, let age, let height = figures.heightMeters else {
            return .failure(.incompleteProfile(profile: person.profileLabel, missing: missing))
        }
        return MiBodyComposition.estimate(
            weightKilograms: reading.weightKilograms, impedance: impedance, heightMeters: height, age: age, sex: sex)
    }
}

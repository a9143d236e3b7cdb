public import FoundationEssentials
public import HealthModel

/// Who stood on a scale, for the figures that depend on the person (body composition). Pure:
/// weighings in, a person or the reason there is none out.
///
/// 1. A participant who wears the scale (the scale's address, name or id in their `devices`,
///    or assigned to them with `healthgate participant assign` before the start) is the one.
/// 2. Without any participant configured, the configuration's `profile` is the person (a home
///    gateway: one user).
/// 3. A scale no participant wears is shared, among the participants who list it in their
///    `sharedDevices` (just one: theirs), or all participants when none does: the weighing goes to the one whose
///    last weight (their last weighing on this source in this run, else their profile's
///    `weightKilograms`) is within ``sharedScaleTolerance`` of it, when exactly one is; two, or
///    none, is nobody. The rule is the gateway's own for shared scales
///    (``HealthModel/PersonAttribution/person(weighing:among:referenceWeights:tolerance:)``), so the
///    person the source names is the one attribution would.
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

    /// How far a weighing on a shared scale may be from a participant's last weight: the
    /// gateway's (``HealthModel/PersonAttribution/defaultWeightToleranceKilograms``).
    public static let sharedScaleTolerance = PersonAttribution.defaultWeightToleranceKilograms

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
        let sharing = participants.filter { Device.matches(scale, selection: $0.sharedDevices) }
        // One who shares it is its user, as the gateway's rules say.
        if sharing.count == 1, let user = sharing.first {
            lastWeights[user.name] = kilograms
            return .success(Person(name: user.name, characteristics: user.characteristics))
        }
        let candidates = sharing.isEmpty ? participants : sharing
        var references: [String: Double] = [:]
        for participant in candidates {
            references[participant.name] = lastWeights[participant.name] ?? participant.characteristics.weightKilograms
        }
        let outcome = PersonAttribution.person(
            weighing: kilograms, among: candidates.map(\.name), referenceWeights: references, tolerance: Self.sharedScaleTolerance)
        switch outcome {
        case .person(let name):
            guard let chosen = candidates.first(where: { $0.name == name }) else { break }
            lastWeights[name] = kilograms
            return .success(Person(name: name, characteristics: chosen.characteristics))
        case .unattributed(.ambiguousWeight):
            let near = candidates.filter { references[$0.name].map { abs($0 - kilograms) <= Self.sharedScaleTolerance } ?? false }
            return .failure(
                .nobody("\(near.map(\.name).joined(separator: " and ")) last weighed within \(Self.sharedScaleTolerance) kg of \(kilograms) kg"))
        case .unattributed: break
        }
        return .failure(
            .nobody("no participant wears the scale, and no participant's last weight is within \(Self.sharedScaleTolerance) kg of \(kilograms) kg"))
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

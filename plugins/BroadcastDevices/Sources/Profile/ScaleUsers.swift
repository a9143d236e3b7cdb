public import FoundationEssentials
public import HealthModel

/// Who stood on a scale, for the figures that depend on the person (body composition): the
/// person the store attributes the weighing to (``HealthModel/ReadingAttribution``, the one
/// implementation of attribution), asked of the attribution the store's latest commit was
/// decided by, with the reference weights it learnt from every weighing it stored. The source
/// names nobody on its readings: the store's writer attributes the weighing where it commits
/// it, and the body composition of the same instant follows it.
///
/// 1. Without any participant configured, the configuration's `profile` is the person (a home
///    gateway: one user); the readings are nobody's.
/// 2. Otherwise the attribution's rules: who wore the scale then (an assignment), who lists it
///    in `devices`, or among those who list it in `sharedDevices` the one whose reference
///    weight is within ``sharedScaleTolerance`` of the weighing. Anyone else is nobody: no body
///    composition is computed for a guess.
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

    /// How far a weighing on a shared scale may be from a participant's reference weight: the
    /// gateway's (``HealthModel/PersonAttribution/defaultWeightToleranceKilograms``).
    public static let sharedScaleTolerance = PersonAttribution.defaultWeightToleranceKilograms

    let participants: [ParticipantCharacteristics]
    let user: UserCharacteristics
    /// The store's attribution of its latest commit; nil: none (a source built without a store).
    let committed: @Sendable () -> ReadingAttribution?
    /// The attribution asked: the store's latest, with the weighings this source asked since.
    var attribution: ReadingAttribution

    /// The people `participants` and `user` (the configuration's `profile`) describe, asked of
    /// `committed` (the store's ``HealthModel/ReadingAttribution``). Without a store (tests, a
    /// source built alone), the attribution the participants' devices and profile weights give.
    public init(
        participants: [ParticipantCharacteristics], user: UserCharacteristics,
        committed: @escaping @Sendable () -> ReadingAttribution? = { nil }
    ) {
        self.participants = participants
        self.user = user
        self.committed = committed
        var weights: [String: Double] = [:]
        for participant in participants { weights[participant.name] = participant.characteristics.weightKilograms }
        attribution = committed() ?? ReadingAttribution(
            rules: PersonAttribution(
                owners: participants.map { ($0.name, $0.devices) },
                shared: participants.map { ($0.name, $0.sharedDevices.map { SharedDeviceUse(device: $0) }) }),
            referenceWeights: weights)
    }

    /// Who weighed `kilograms` on `scale` at `date`.
    public mutating func person(on scale: Device, weighing kilograms: Double, at date: Date) -> Result<Person, BodyCompositionOmission> {
        guard !participants.isEmpty else { return .success(Person(name: nil, characteristics: user)) }
        if let latest = committed() { attribution = latest }
        switch attribution.weighing(on: scale, at: date, kilograms: kilograms) {
        case .person(let name):
            // A participant made at run time (`participant assign`) has the configured profile.
            let figures = participants.first { $0.name == name }?.characteristics ?? user
            return .success(Person(name: name, characteristics: figures))
        case .unattributed(.ambiguousWeight):
            return .failure(.nobody("several people's reference weights are within \(Self.sharedScaleTolerance) kg of \(kilograms) kg"))
        case .unattributed(.weightFitsNobody):
            return .failure(.nobody(
                "no reference weight of those sharing the scale is within \(Self.sharedScaleTolerance) kg of \(kilograms) kg"))
        case .unattributed(let reason):
            return .failure(.nobody("nobody wears, lists or shares the scale (\(reason.rawValue))"))
        }
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

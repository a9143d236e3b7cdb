public import FoundationEssentials

/// Whose reading it is: the rules the gateway attributes every reading by when it stores it,
/// from what it knows at the reading's time. A value with no I/O and no clock.
///
/// In order, the first rule that applies decides:
/// 1. **The user index** the measurement carries (``MetadataKey/userIndex``: the Weight Scale,
///    Body Composition and Blood Pressure profiles' User ID), when a person lists that index for
///    the device (``SharedDeviceUse``). A device for which someone lists an index attributes a
///    reading with an index nobody lists to nobody.
/// 2. **Who wore the device then**: a run-time assignment (`healthgate participant assign`) is
///    a ``WearInterval``; the latest one that began at or before the reading's start and had not
///    ended holds. A strap handed over at 10:00 gives the readings after 10:00 to its new
///    wearer, and a restart changes nothing, since the intervals are stored.
/// 3. **Who lists the device as their own** (a participant's `devices` in the configuration).
/// 4. **A shared device**: the one person sharing it; among several, for a weighing (body mass)
///    the person whose reference weight (their latest attributed weighing, else their profile's
///    weight) is within ``weightToleranceKilograms`` of it, when exactly one is.
///
/// Anything else, a reading of no device, of a device nobody wears, lists or shares, a weighing
/// near two people's weights or near nobody's, is **unattributed**, with its reason: never
/// guessed.
public struct PersonAttribution: Sendable {
    /// What was decided for one reading.
    public enum Outcome: Hashable, Sendable {
        /// The reading is this person's.
        case person(String)
        /// The reading is nobody's, for this reason.
        case unattributed(UnattributedReason)
    }

    /// Why a reading is attributed to nobody; the raw values are what `status` counts by.
    public enum UnattributedReason: String, Hashable, Sendable, Codable, CaseIterable {
        /// The record names no device.
        case noDevice
        /// Nobody wears, lists or shares the device.
        case nobody
        /// The measurement's user index is one nobody lists for the device.
        case unknownUserIndex
        /// Several people share the device and the reading is not a weighing.
        case sharedDevice
        /// A weighing within the tolerance of several people's reference weights.
        case ambiguousWeight
        /// A weighing within the tolerance of nobody's reference weight (or nobody sharing the
        /// scale has one).
        case weightFitsNobody
    }

    /// How far a weighing may be from a person's reference weight and still be theirs: 2 kg. A
    /// body's weight moves by up to about 2 kg within a day (meals, water), so a tighter band
    /// would leave a person's own evening weighing unattributed; two people whose weights are
    /// closer than twice this are told apart only by a user index, and their weighings stay
    /// unattributed until someone attributes them.
    public static let defaultWeightToleranceKilograms = 2.0

    /// The devices people list as their own (`devices`), canonical identity to person.
    private let owners: [DeviceIdentity: (order: Int, person: String)]
    /// The devices people share (`sharedDevices`), canonical identity to its users in order.
    private let users: [DeviceIdentity: [SharedDeviceUse.User]]
    /// The run-time assignments by the identity they name, in order of their start.
    private let history: [DeviceIdentity: [WearInterval]]
    /// See ``defaultWeightToleranceKilograms``.
    public let weightToleranceKilograms: Double

    /// Rules from what the people list and the run-time assignments.
    /// - Parameters:
    ///   - owners: each person's name with the devices they list as their own; a device listed
    ///     by two people is the first one's (as the configuration allows only one).
    ///   - shared: each person's name with the devices they share with others.
    ///   - history: every run-time assignment, in any order.
    public init(
        owners: [(person: String, devices: [String])] = [], shared: [(person: String, uses: [SharedDeviceUse])] = [],
        history: [WearInterval] = [], weightToleranceKilograms: Double = Self.defaultWeightToleranceKilograms
    ) {
        var ownerTable: [DeviceIdentity: (order: Int, person: String)] = [:]
        for (order, owner) in owners.enumerated() {
            for device in owner.devices where ownerTable[DeviceIdentity(device)] == nil {
                ownerTable[DeviceIdentity(device)] = (order, owner.person)
            }
        }
        var userTable: [DeviceIdentity: [SharedDeviceUse.User]] = [:]
        for (person, uses) in shared {
            for use in uses { userTable[DeviceIdentity(use.device), default: []].append(.init(person: person, userIndex: use.userIndex)) }
        }
        self.owners = ownerTable
        self.users = userTable
        self.history = Dictionary(grouping: history.sorted { $0.start < $1.start }) { DeviceIdentity($0.device) }
        self.weightToleranceKilograms = weightToleranceKilograms
    }

    /// Rules from the people `roster` lists and the run-time assignments' intervals.
    public init(roster: AttributionRoster, history: [WearInterval]) {
        self.init(
            owners: roster.people.map { ($0.name, $0.devices) }, shared: roster.people.map { ($0.name, $0.sharedDevices) },
            history: history)
    }

    /// Whether no rule can attribute anything: nobody lists, shares or was assigned a device.
    public var isEmpty: Bool { owners.isEmpty && users.isEmpty && history.isEmpty }

    /// The person a reading of `device` starting at `date` belongs to.
    /// - Parameters:
    ///   - userIndex: the user index the measurement carries, if any.
    ///   - weightKilograms: for a weighing, its body mass; nil for any other reading.
    ///   - referenceWeights: the reference weight of each person who has one (kilograms).
    public func attribute(
        device: Device?, at date: Date, userIndex: Int64? = nil, weightKilograms: Double? = nil,
        referenceWeights: [String: Double] = [:]
    ) -> Outcome {
        guard let device else { return .unattributed(.noDevice) }
        let identities = device.identities
        let sharing = identities.flatMap { users[$0] ?? [] }
        if let userIndex, sharing.contains(where: { $0.userIndex != nil }) {
            let named = Set(sharing.filter { $0.userIndex.map(Int64.init) == userIndex }.map(\.person))
            return named.count == 1 ? .person(named.first ?? "") : .unattributed(.unknownUserIndex)
        }
        if let wearer = wearer(of: identities, at: date) { return .person(wearer) }
        // The first participant listing any of its identities, as the roster's owner(of:).
        if let owner = identities.compactMap({ owners[$0] }).min(by: { $0.order < $1.order }) { return .person(owner.person) }
        let people = sharing.map(\.person).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        if people.count == 1 { return .person(people[0]) }
        guard people.count > 1 else { return .unattributed(.nobody) }
        guard let weightKilograms else { return .unattributed(.sharedDevice) }
        return Self.person(weighing: weightKilograms, among: people, referenceWeights: referenceWeights, tolerance: weightToleranceKilograms)
    }

    /// The one person among `people` whose reference weight is within `tolerance` of a weighing
    /// of `kilograms`; nobody when none is, or when several are (``UnattributedReason/ambiguousWeight``):
    /// the shared-scale rule, which the sources that must know the person to compute a figure
    /// (a Mi scale's body composition) apply too.
    public static func person(
        weighing kilograms: Double, among people: [String], referenceWeights: [String: Double],
        tolerance: Double = defaultWeightToleranceKilograms
    ) -> Outcome {
        let near = people.filter { person in referenceWeights[person].map { abs($0 - kilograms) <= tolerance } ?? false }
        switch near.count {
        case 1: return .person(near[0])
        case 0: return .unattributed(.weightFitsNobody)
        default: return .unattributed(.ambiguousWeight)
        }
    }

    /// Whether the person of `device`'s readings may change with their time: a run-time
    /// assignment names one of its identities. When it does not, ``attribute(device:at:userIndex:weightKilograms:referenceWeights:)``
    /// gives every reading of the device without a user index or a weight the same outcome.
    public func dependsOnTime(_ device: Device) -> Bool {
        history.isEmpty ? false : device.identities.contains { history[$0] != nil }
    }

    /// The person a run-time assignment of one of `identities` gave the device to at `date`.
    private func wearer(of identities: Set<DeviceIdentity>, at date: Date) -> String? {
        var latest: WearInterval?
        for identity in identities {
            for interval in history[identity] ?? [] where interval.contains(date) {
                // The later assignment holds; of two made at once, the one named later.
                if latest.map({ interval.start > $0.start || (interval.start == $0.start && interval.person > $0.person) }) ?? true {
                    latest = interval
                }
            }
        }
        return latest?.person
    }
}

/// A time during which a run-time assignment (`healthgate participant assign`) gave a device to
/// a person: from the assignment until the device was assigned again or freed (a class's end),
/// or still (`end` nil). The store keeps every one, so attribution outlives a restart.
public struct WearInterval: Hashable, Sendable, Codable {
    /// The device as the assignment named it: BLE address, serial number or name.
    public var device: String
    /// The person's name.
    public var person: String
    /// When the assignment was made.
    public var start: Date
    /// When it ended; nil while it holds.
    public var end: Date?

    /// Creates an interval.
    public init(device: String, person: String, start: Date, end: Date? = nil) {
        self.device = device
        self.person = person
        self.start = start
        self.end = end
    }

    /// Whether a reading starting at `date` falls in it.
    public func contains(_ date: Date) -> Bool {
        start <= date && end.map { date < $0 } ?? true
    }
}

/// A device a person shares with others (a family's scale, a clinic's cuff), as they list it in
/// the configuration's `sharedDevices`: with the user index the device gives them, if it has
/// user slots.
public struct SharedDeviceUse: Hashable, Sendable, Codable {
    /// The device: BLE address, serial number or name.
    public var device: String
    /// The user index the device sends in this person's measurements (0 to 254); nil when the
    /// device sends none (the Mi scales): their weighings are told apart by weight.
    public var userIndex: Int?

    /// Creates a use.
    public init(device: String, userIndex: Int? = nil) {
        self.device = device
        self.userIndex = userIndex
    }

    /// One person's use of a device, as the rules look it up.
    struct User: Hashable, Sendable {
        var person: String
        var userIndex: Int?
    }
}

/// The people readings are attributed to, as the configuration lists them: each one's own
/// devices, the devices they share and the weight their weighings on a shared scale are told
/// apart by. The store attributes every reading it commits by it (with the run-time assignments
/// and erasures it holds).
public struct AttributionRoster: Hashable, Sendable {
    /// One person.
    public struct Person: Hashable, Sendable {
        /// Their name, as ``MetadataKey/person`` carries it.
        public var name: String
        /// The devices they list as their own (`devices`).
        public var devices: [String]
        /// The devices they share with others (`sharedDevices`).
        public var sharedDevices: [SharedDeviceUse]
        /// Their weight to start from on a shared scale (kilograms): their latest stored
        /// weighing, else their profile's; nil: unknown.
        public var referenceWeightKilograms: Double?

        /// A person.
        public init(name: String, devices: [String] = [], sharedDevices: [SharedDeviceUse] = [], referenceWeightKilograms: Double? = nil) {
            self.name = name
            self.devices = devices
            self.sharedDevices = sharedDevices
            self.referenceWeightKilograms = referenceWeightKilograms
        }
    }

    /// The people, in the configuration's order (a device two people list is the first one's).
    public var people: [Person]

    /// A roster of `people`.
    public init(_ people: [Person] = []) {
        self.people = people
    }
}

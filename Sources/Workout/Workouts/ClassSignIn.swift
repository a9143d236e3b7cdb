public import FoundationEssentials
public import HealthModel
import GatewayRuntime

/// Signing straps in to a class: which heart-rate straps nobody wears were heard lately (the
/// board's new-strap tiles, `healthgate participant straps`), what an assignment made during the
/// class does, and which straps the class's end frees. A value with no I/O and no clock:
/// ``ParticipantWorkouts`` (WorkoutRuntime) feeds it readings, the class's start and end and
/// the assignments, and carries out its decisions (the store, the roster, the workouts); tests
/// drive it directly.
///
/// **The class** is the group workout: it runs from the first participant's workout start
/// (`healthgate workout start --all`) until no participant's workout is in progress any more
/// (`healthgate workout end --all`).
///
/// **A sign-in** is an assignment made while the class runs: the participant's workout starts
/// from the strap's first beat in the class (``SignIn/workoutStart``), and unless it is kept
/// (`--keep`, the board's "keep" box) the assignment lasts until the class ends
/// (``SignIn/untilClassEnd``), when the strap is freed. An assignment made with no class
/// running stays, as before.
public struct ClassSignIn: Sendable {
    /// A strap heard that no participant wears: what its new-strap tile shows.
    public struct NewStrap: Hashable, Sendable, Codable {
        /// Its identity in the form `participant assign` takes (``HealthModel/Device/strapIdentity``:
        /// a Polar device id, else the radio's identity, else the local identifier).
        public var identity: String
        /// The radio its latest reading came by; nil for one that came by no radio.
        public var radio: StrapRadio?
        /// Its name, when it has one (`Polar H10 1A2B3C4D`).
        public var name: String?
        /// The latest heart rate, bpm.
        public var heartRate: Double
        /// Its first reading since it was heard, not before the class's start: where a workout
        /// signed in with it starts.
        public var firstBeat: Date
        /// Its latest reading's date.
        public var lastBeat: Date
    }

    /// What an assignment does (``signIn(device:participant:keep:)``).
    public struct SignIn: Hashable, Sendable {
        /// The assignment lasts until the class ends (made during a class, not kept).
        public var untilClassEnd: Bool
        /// Made during a class: the participant's workout starts here (the strap's first beat in
        /// the class), or now when the strap was not heard yet. Nil: no class runs.
        public var workoutStart: Date?
        /// The class's activity, when one runs.
        public var activity: WorkoutActivityType?

        /// Creates a decision.
        public init(untilClassEnd: Bool, workoutStart: Date?, activity: WorkoutActivityType?) {
            self.untilClassEnd = untilClassEnd
            self.workoutStart = workoutStart
            self.activity = activity
        }
    }

    /// A strap silent for longer than this is no longer offered (its tile goes): it was taken off,
    /// or it was a passer-by's.
    public static let forgetAfterSeconds = 60.0
    /// Straps followed at once; further new ones are not offered until others are forgotten.
    public static let maximumStraps = 256

    private struct Heard: Sendable {
        var strap: NewStrap
        var identities: Set<DeviceIdentity>
        /// When the latest reading arrived, on the monotonic clock.
        var arrival: Duration
    }

    private var heard: [String: Heard] = [:]
    /// When the running class began; nil while no class runs.
    public private(set) var classStart: Date?
    /// The running class's activity.
    public private(set) var activity: WorkoutActivityType?
    /// The devices (as assigned) signed in until the class ends, with their participant.
    public private(set) var untilClassEnd: [String: String] = [:]

    /// No class, no strap heard.
    public init() {}

    /// Takes one heart-rate reading of `device` (its date `date`, its radio), arrived at `now` on
    /// the monotonic clock. `worn`: a participant wears the device; then it is no new strap (and
    /// stops being one).
    public mutating func hear(
        _ device: Device, heartRate: Double, at date: Date, radio: StrapRadio?, worn: Bool, arrivedAt now: Duration
    ) {
        guard let identity = device.strapIdentity?.canonical else { return }
        guard !worn else {
            heard[identity] = nil
            return
        }
        if var known = heard[identity] {
            known.strap.heartRate = heartRate
            known.strap.lastBeat = max(known.strap.lastBeat, date)
            known.strap.radio = radio ?? known.strap.radio
            known.strap.name = device.name ?? known.strap.name
            known.identities.formUnion(device.identities)
            known.arrival = now
            heard[identity] = known
            return
        }
        if heard.count >= Self.maximumStraps { forget(before: now) }
        guard heard.count < Self.maximumStraps else { return }
        let first = classStart.map { max($0, date) } ?? date
        heard[identity] = Heard(
            strap: NewStrap(identity: identity, radio: radio, name: device.name, heartRate: heartRate, firstBeat: first, lastBeat: date),
            identities: device.identities.union([DeviceIdentity(identity)]), arrival: now)
    }

    /// The straps nobody wears heard within ``forgetAfterSeconds`` of `now` (monotonic), in the
    /// order they were first heard.
    public func newStraps(at now: Duration) -> [NewStrap] {
        heard.values
            .filter { (now - $0.arrival).seconds <= Self.forgetAfterSeconds }
            .map(\.strap)
            .sorted { ($0.firstBeat, $0.identity) < ($1.firstBeat, $1.identity) }
    }

    /// Forgets the straps silent for longer than ``forgetAfterSeconds`` at `now`.
    public mutating func forget(before now: Duration) {
        heard = heard.filter { (now - $0.value.arrival).seconds <= Self.forgetAfterSeconds }
    }

    /// The class began at `start` (its first workout's start) with `activity`: straps heard
    /// before count from `start`.
    public mutating func classBegan(at start: Date, activity: WorkoutActivityType) {
        classStart = start
        self.activity = activity
        heard = heard.mapValues { known in
            var known = known
            known.strap.firstBeat = max(start, known.strap.firstBeat)
            return known
        }
    }

    /// `device` is assigned to `participant` now; `keep`: the assignment stays after the class.
    /// The strap is no new strap any more.
    public mutating func signIn(device: String, participant: String, keep: Bool) -> SignIn {
        let identity = DeviceIdentity(device)
        let strap = heard.first { $0.value.identities.contains(identity) }
        if let strap { heard[strap.key] = nil }
        guard let classStart else {
            untilClassEnd[device] = nil
            return SignIn(untilClassEnd: false, workoutStart: nil, activity: nil)
        }
        let temporary = !keep
        // The same strap written another way replaces the earlier sign-in.
        for earlier in untilClassEnd.keys where DeviceIdentity(earlier) == identity { untilClassEnd[earlier] = nil }
        if temporary { untilClassEnd[device] = participant }
        return SignIn(untilClassEnd: temporary, workoutStart: strap.map { max(classStart, $0.value.strap.firstBeat) }, activity: activity)
    }

    /// Sign-ins read back from the store after a restart (``ParticipantAssignment/untilClassEnd``).
    public mutating func restore(_ assignments: [ParticipantAssignment]) {
        for assignment in assignments where assignment.untilClassEnd { untilClassEnd[assignment.device] = assignment.participant }
    }

    /// `device` was assigned outside a sign-in decision (or left its participant): no longer
    /// freed at the class's end.
    public mutating func forgetSignIn(of device: String) {
        let identity = DeviceIdentity(device)
        for earlier in untilClassEnd.keys where DeviceIdentity(earlier) == identity { untilClassEnd[earlier] = nil }
    }

    /// The class ended: returns the devices to free (signed in until its end, as assigned); the
    /// new straps clear (a strap still beating is offered again from its next reading).
    public mutating func classEnded() -> [String] {
        let freed = untilClassEnd.keys.sorted()
        untilClassEnd = [:]
        heard = [:]
        classStart = nil
        activity = nil
        return freed
    }
}

public import FoundationEssentials
public import HealthModel

/// Where the ``WorkoutController`` keeps the workout in progress so that it survives a crash:
/// its definition, its acknowledged commands (``WorkoutJournalEntry``), and read access to the
/// committed samples it covers.
///
/// A workout's samples are not written here one by one: they are the committed samples whose
/// type and device the workout collects and that fall in its running intervals (quantity samples
/// by end date, heartbeat series by overlap). So the store that commits the samples is the only
/// record of them, and a restore rebuilds the workout from what that store committed.
///
/// The gateway's implementation is the SQLite store's (`SQLiteWorkoutStateStore`, schema
/// version 4), which also drops a workout's rows in the transaction that stores the finished
/// workout. ``VolatileWorkoutStore`` keeps everything in memory, for a gateway without a SQLite
/// store (its workout does not survive a restart) and for tests.
///
/// Contract: every method blocks until its work is durable (or has failed) and must be called
/// off Swift's cooperative thread pool; the controller calls them from its own serial queue, one
/// at a time. Errors are ``WorkoutError`` with code ``WorkoutError/Code/persistence``.
public protocol WorkoutStateStore: Sendable {
    /// The workouts in progress or ended but not yet stored, oldest first.
    func journaledWorkouts() throws(WorkoutError) -> [JournaledWorkout]

    /// Makes `entries` durable, in one transaction, as the entries numbered from `index` of the
    /// workout `definition` describes (index 0 also records the definition). Returns only once
    /// they are committed; on error none of them is.
    func append(_ entries: [WorkoutJournalEntry], from index: Int, of definition: WorkoutDefinition) throws(WorkoutError)

    /// `date` as this store keeps it (the SQLite store: the nearest microsecond). A workout
    /// started in the past starts at its stored form, so that the committed sample it starts at
    /// (a strap's first beat) reads back inside it, not a fraction of a microsecond before.
    func storedDate(_ date: Date) -> Date

    /// Committed quantity samples of `types` that end at or after `start`, and committed
    /// heartbeat series that end at or after `start`, of the devices `devices` names (nil: every
    /// device) but those `others` names, in no particular order. Devices are matched as
    /// ``HealthModel/IdentitySelection`` matches them (a record without a device only when
    /// `devices` is nil; `others` never leaves it out). The selection is the store's to narrow
    /// the read with (a workout's end in a class reads its own straps' samples, not the
    /// class's): the caller filters the records by the same rule again, so a store may return
    /// more, never less.
    ///
    /// With `person` (a participant's workout) the records are those the builder takes by
    /// attribution (``LiveWorkoutBuilder/belongs(_:to:selection:)``): `person`'s from any device,
    /// and those attributed to nobody from `devices`.
    func committedRecords(
        of types: [QuantityType], endingFrom start: Date, devices: [String]?, excluding others: [String], person: String?
    ) throws(WorkoutError) -> [HealthRecord]

    /// Whether ``committedRecords(of:endingFrom:devices:excluding:)`` gives back every sample the gateway's
    /// store committed: then a live workout keeps only its recent samples in memory and reads
    /// the others back when it needs them all (the workout controller's `keptSeconds`). False (the
    /// default): it keeps every sample it collects.
    var recordsSamples: Bool { get }

    /// The finished workout `id` was handed to the bus. A store whose own sink drops the
    /// workout's rows when it commits the workout ignores this; others forget the workout.
    func handedOver(_ id: SampleID) throws(WorkoutError)

    /// Returns once the finished workout `id`, handed to the bus, is stored where readers find
    /// it (`healthgate workout list`), or after `timeout`, whichever comes first; whether it is
    /// stored (false too when the wait is cancelled). Async, unlike the rest: it waits for
    /// another component (the store's sink), not for work of its own. A store that does not
    /// keep finished workouts returns true at once.
    /// - Throws: ``WorkoutError/Code/persistence`` naming the store and the workout when the
    ///   store cannot be read: that is no answer to whether it holds the workout, so it is
    ///   never reported as "not stored yet".
    func waitUntilStored(_ id: SampleID, timeout: Duration) async throws(WorkoutError) -> Bool
}

extension WorkoutStateStore {
    /// The records of `devices` but those `others` names, whoever's they are (the gateway's own
    /// workout).
    public func committedRecords(
        of types: [QuantityType], endingFrom start: Date, devices: [String]?, excluding others: [String]
    ) throws(WorkoutError) -> [HealthRecord] {
        try committedRecords(of: types, endingFrom: start, devices: devices, excluding: others, person: nil)
    }

    /// False: a store that gives no samples back (``VolatileWorkoutStore``).
    public var recordsSamples: Bool { false }

    /// True at once: a store that keeps no finished workouts has nothing to wait for.
    public func waitUntilStored(_ id: SampleID, timeout: Duration) async throws(WorkoutError) -> Bool { true }
}

public import Workouts
import AsyncPrimitives
public import FoundationEssentials
public import HealthModel
public import GatewayRuntime
public import SampleBus
import Synchronization
import Dispatch

/// Runs the live workout: applies the control commands to a ``LiveWorkout``, makes each one
/// durable in its ``WorkoutStateStore`` before acknowledging it, feeds it the bus's samples, and
/// publishes the finished workout.
///
/// In the gateway it plays two roles, both added by the executable beside the configured plugins:
/// - a ``SampleSink`` that feeds the bus's heart-rate and pedometer samples to the live workout
///   (it accepts quantity samples and heartbeat series, never workouts);
/// - a ``SampleSource`` whose `run` publishes finished workouts as ``HealthRecord/workout(_:)``,
///   so every sink that accepts workouts stores them.
///
/// **Durability.** A command is answered only after its ``WorkoutJournalEntry`` is committed to
/// the store, and `end` only once the finished workout is stored (see
/// ``WorkoutStateStore/waitUntilStored(_:timeout:)``); a command the store cannot commit is refused with
/// ``WorkoutError/Code/persistence`` and changes nothing. Samples are not written by the
/// controller: a workout's samples are the committed samples of its types and devices in its
/// running intervals. ``restore()`` (run before the sink role takes its first batch and before
/// the first command) rebuilds the workout from the store's journal and committed samples: a
/// running workout keeps running (the time the gateway was down counts as running time and shows
/// as a heart-rate gap), a paused one stays paused, and one that ended but was not stored yet is
/// published again. At the end, committed samples the live stream had not delivered yet are
/// collected too, so the workout links every committed sample in its running intervals.
///
/// Isolation: commands and restores run one at a time on the controller's serial queue (the
/// store blocks, so it never runs on the cooperative pool). The live state is in a `Mutex` that
/// is never held while the store works: a command is tried on a copy, committed, then applied to
/// the live state. A sample the sink role collects in that moment is judged against the previous
/// state; a pause or end drops what it should not have taken, and the end collects from the
/// store what it should have.
public final class WorkoutController: SampleSink, SampleSource {
    private struct State {
        var restoreDone = false
        var live: LiveWorkout?
        var pending: [Workout] = []
        var publishing: Set<SampleID> = []
        var publisher: SamplePublisher?
        var lastSnapshot: WorkoutSnapshot?
    }

    /// The profile zones and energy come from.
    public let profile: UserProfile
    /// The participant whose workouts it runs (see ``Participant``); nil for the gateway's own
    /// single-person workout. It restores only the journaled workouts of this participant.
    public let participant: String?
    private let store: any WorkoutStateStore
    private let clock: any GatewayClock
    /// The base of the clock's dates, journaled with each entry (see ``ClockBase``).
    private let clockBase: (@Sendable () -> ClockBase)?
    private let ids: SampleIDGenerator
    private let logger: Logger
    private let executor = QueueExecutor(label: "healthgate.workouts")
    private let state = Mutex(State())
    /// The devices that are someone else's: a workout started without a device list leaves them.
    private let othersDevices: (@Sendable () -> [String])?

    /// Creates a controller; nothing is read from `store` until ``restore()``.
    /// - Parameter othersDevices: the devices that belong to someone else, as identities (the
    ///   gateway's own workout beside a class: the devices the participants wear); a workout
    ///   started without a device list collects from every device but those, and names them in
    ///   its ``HealthModel/MetadataKey/excludedDevices`` so that the store links late heartbeat
    ///   series by the same rule. Nil: every device.
    /// - Parameter storeWait: how long ``end()`` waits for the store to hold the workout
    ///   (`storeWaitSeconds`).
    public init(
        profile: UserProfile, store: any WorkoutStateStore, clock: any GatewayClock, ids: SampleIDGenerator,
        logger: Logger, participant: String? = nil, clockBase: (@Sendable () -> ClockBase)? = nil,
        othersDevices: (@Sendable () -> [String])? = nil, storeWait: Duration = WorkoutController.defaultStoreWait
    ) {
        self.storeWait = storeWait
        self.othersDevices = othersDevices
        self.clockBase = clockBase
        self.participant = participant
        self.profile = profile
        self.store = store
        self.clock = clock
        self.ids = ids
        self.logger = logger
    }

    /// A controller for a gateway: the profile from `configuration.profile`.
    /// - Throws: ``WorkoutError`` (``WorkoutError/Code/invalidProfile``) naming the profile key.
    public convenience init(
        configuration: GatewayConfiguration, environment: PluginEnvironment, store: any WorkoutStateStore
    ) throws(WorkoutError) {
        self.init(
            profile: try UserProfile.decode(configuration.profile), store: store, clock: environment.clock,
            ids: environment.ids, logger: environment.logger, storeWait: .seconds(configuration.storeWaitSeconds))
    }

    // MARK: Commands

    /// Starts a workout (prepare and start at once).
    /// - Parameters:
    ///   - devices: local identifiers or names to collect from; nil or empty collects from all.
    ///   - types: the types to collect; default ``WorkoutDefinition/defaultTypes(for:)``.
    ///   - startDate: when it started, if earlier than now (a strap signed in to a running class
    ///     starts its wearer's workout at its first beat, ``ClassSignIn``); the committed
    ///     samples since then are collected at once. Nil or later than now: now.
    /// - Throws: ``WorkoutError/Code/alreadyActive`` when a workout is in progress,
    ///   ``WorkoutError/Code/persistence`` when the store cannot commit it.
    @discardableResult
    public func start(
        activity: WorkoutActivityType, devices: [String]? = nil,
        types: [QuantityType]? = nil, startDate: Date? = nil
    ) async throws(WorkoutError) -> WorkoutSnapshot {
        let definition = WorkoutDefinition(
            id: ids.next(), activityType: activity, firstActivityID: ids.next(),
            devices: devices.flatMap { $0.isEmpty ? nil : $0 }, types: types ?? WorkoutDefinition.defaultTypes(for: activity),
            participant: participant)
        let snapshot = try await onQueue { () throws(WorkoutError) -> WorkoutSnapshot in
            if let session = self.state.withLock({ $0.live?.session }) {
                throw WorkoutError(
                    .alreadyActive,
                    "a \(session.activityType.rawValue) workout is already \(session.state.rawValue); end it first",
                    state: session.state, action: .start)
            }
            let now = self.clock.now()
            // In the past: as the store keeps it, so that the committed sample it starts at is in.
            let start = startDate.map { self.store.storedDate(min($0, now)) } ?? now
            var live = self.bounded(LiveWorkout(definition))
            let base = self.clockBase?()
            let entries = [
                WorkoutJournalEntry(action: .prepare, date: start, clockBase: base),
                WorkoutJournalEntry(action: .start, date: start, clockBase: base),
            ]
            for entry in entries { try live.apply(entry) }
            // Started in the past: what the store committed since is the workout's already (the
            // bus delivered it before the workout existed).
            let committed = start < now ? try self.committedRecords(of: definition.types, devices: definition.devices, endingFrom: start) : []
            try self.store.append(entries, from: 0, of: definition)
            live.collectCommitted(committed)
            // Commands run one at a time on this queue, so no workout appeared meanwhile.
            self.state.withLock { $0.live = live }
            return live.snapshot(at: now, profile: self.profile)
        }
        logger.info("started \(activity.rawValue) workout \(definition.id)"
            + (startDate.map { " from \(RFC3339.string(from: $0))" } ?? "")
            + (definition.devices.map { " collecting from \($0.joined(separator: ", "))" } ?? ""))
        return snapshot
    }

    /// Pauses the workout; ignored when already paused.
    @discardableResult
    public func pause() async throws(WorkoutError) -> WorkoutSnapshot { try await perform(.pause) }

    /// Resumes the workout; ignored when already running.
    @discardableResult
    public func resume() async throws(WorkoutError) -> WorkoutSnapshot { try await perform(.resume) }

    /// Records a lap: an event from the previous lap (or the start) to now.
    @discardableResult
    public func lap() async throws(WorkoutError) -> WorkoutSnapshot { try await perform(.lap) }

    /// Records an instant marker event.
    @discardableResult
    public func marker(metadata: Metadata = Metadata()) async throws(WorkoutError) -> WorkoutSnapshot {
        try await perform(.marker, metadata: metadata)
    }

    /// Records a segment event from `start` to now.
    @discardableResult
    public func segment(from start: Date) async throws(WorkoutError) -> WorkoutSnapshot {
        try await perform(.segment, segmentStart: start)
    }

    /// Multisport: closes the current activity and begins one of `type`.
    @discardableResult
    public func beginNewActivity(_ type: WorkoutActivityType) async throws(WorkoutError) -> WorkoutSnapshot {
        try await perform(.beginActivity, newActivity: .init(id: ids.next(), type: type))
    }

    /// Ends the workout: collects the committed samples the stream had not delivered, commits
    /// the end, and publishes the workout (or keeps it for the source role when that is not
    /// running; it stays in the store until a sink stores it). Returns once the store holds the
    /// workout, or when ``storeWait`` has passed first: then the answer's
    /// ``WorkoutSnapshot/stored`` is false (and logged), never an answer as if it were stored.
    /// - Throws: ``WorkoutError`` as ``endHandingOver()`` and ``waitUntilStored(_:by:)`` throw:
    ///   the latter's ``WorkoutError/Code/persistence`` comes after the end was committed.
    @discardableResult
    public func end() async throws(WorkoutError) -> WorkoutSnapshot {
        let ended = try await endHandingOver()
        return try await waitUntilStored(ended, by: clock.uptime() + storeWait)
    }

    /// A workout ended by ``endHandingOver()``: its final snapshot, and the workout that
    /// ``waitUntilStored(_:by:)`` waits for.
    public struct Ended: Sendable {
        /// The final snapshot.
        public let snapshot: WorkoutSnapshot
        /// The ended workout.
        let workout: SampleID
        /// Whether it was kept for the source role, which was not running to publish it: then
        /// no wait brings it to the store, which is read once.
        let kept: Bool
    }

    /// Ends the workout as ``end()`` does, without waiting for the store to hold it: a class's end
    /// runs this for a few participants at a time (the part that reads the samples back and
    /// builds the workout), then waits for the store for all at once, until one deadline
    /// (``waitUntilStored(_:by:)``).
    public func endHandingOver() async throws(WorkoutError) -> Ended {
        let (workout, snapshot) = try await onQueue { () throws(WorkoutError) -> (Workout, WorkoutSnapshot) in
            // Read before taking the lock: the store may hold samples the stream has not
            // delivered to the sink role yet (each sink has its own queue).
            // Only the workout's devices' records: in a class, the others' are the other ends'.
            let session = self.state.withLock { $0.live?.session }
            let committed = try session.map { session throws(WorkoutError) in
                try session.startDate.map { start throws(WorkoutError) in
                    try self.committedRecords(of: session.types, devices: session.devices, endingFrom: start)
                } ?? []
            } ?? []
            // Tried on a copy: the sink role keeps collecting into the live state while the end
            // is committed, and what it collects meanwhile is kept (below).
            guard var trial = self.state.withLock({ $0.live }) else {
                throw WorkoutError(.noSession, "no workout is in progress", action: .end)
            }
            trial.collectCommitted(committed)
            let entry = WorkoutJournalEntry(action: .end, date: self.clock.now(), clockBase: self.clockBase?())
            try trial.apply(entry)
            try self.store.append([entry], from: trial.journalCount - 1, of: trial.session.definition)
            let (workout, snapshot) = self.state.withLock { state -> (Workout, WorkoutSnapshot) in
                var live = state.live ?? trial
                live.collectCommitted(committed)
                do {
                    // Commands run one at a time on this queue: the live session is the trial's.
                    try live.apply(entry)
                } catch {
                    self.logger.error("the committed end does not apply to the live state (\(error)); using the state it was tried on")
                    live = trial
                }
                let workout = self.finished(live)
                let snapshot = live.snapshot(at: entry.date, profile: self.profile)
                state.live = nil
                state.pending.append(workout)
                state.lastSnapshot = snapshot
                return (workout, snapshot)
            }
            return (workout, snapshot)
        }
        logger.info(
            "ended \(workout.activityType.rawValue) workout \(workout.id): \(Int(workout.duration)) s running, "
                + "\(String(count: workout.statistics.reduce(0) { $0 + $1.sampleCount }, "sample"))")
        let published = await publishPending()
        let kept = !published.contains(workout.id) && state.withLock { $0.publisher == nil }
        return Ended(snapshot: snapshot, workout: workout.id, kept: kept)
    }

    /// `ended`'s snapshot once the store holds its workout, so that `workout end` then `workout
    /// list` shows it; when `deadline` (on ``GatewayClock/uptime()``) passes first, as the
    /// store's writer may be slow or stopped, or the workout is kept for a source role that is
    /// not running (then the store is read once, without a wait), the snapshot says it is not
    /// stored (``WorkoutSnapshot/stored`` false), and the log says so. Whoever handed the workout
    /// to the bus (this end, another's, the source role's retries), the answer is the store's.
    /// - Throws: ``WorkoutError/Code/persistence`` when the store cannot be read: the workout
    ///   ended, but whether it is stored is unknown, which the caller hears as an error rather
    ///   than as a wait that ran out.
    public func waitUntilStored(_ ended: Ended, by deadline: Duration) async throws(WorkoutError) -> WorkoutSnapshot {
        let id = ended.workout
        let waited = ended.kept ? .zero : deadline - clock.uptime()
        let stored: Bool
        do {
            stored = try await store.waitUntilStored(id, timeout: max(waited, .zero))
        } catch {
            logger.error("workout \(id) ended, but \(error.message)")
            throw WorkoutError(.persistence, "the workout ended, but \(error.message)", state: .ended, action: .end)
        }
        var snapshot = ended.snapshot
        snapshot.stored = stored
        if !stored { snapshot.storeWaitSeconds = (max(waited, .zero).seconds * 10).rounded() / 10 }
        if !stored, ended.kept {
            logger.warning("workout \(id) ended and its end is journaled; it is not stored yet, kept until its publisher runs")
        } else if !stored {
            logger.warning(
                "workout \(id) ended and its end is journaled, but the store did not hold it within "
                    + "\(String(cFormat: "%.1f", max(waited, .zero).seconds)) s; it is stored once the store's writer commits it")
        }
        return snapshot
    }

    /// The live state; when no workout runs, the last ended one's final state (or `notStarted`).
    /// Before ``restore()`` it knows no workout.
    ///
    /// A live workout that keeps only its recent samples (``keptSeconds``) reads the rest back
    /// from the store for it, on the calling thread.
    public func status() -> WorkoutSnapshot {
        let (live, last) = state.withLock { ($0.live, $0.lastSnapshot) }
        if let live { return fullSnapshot(of: live, at: clock.now()) }
        return last ?? WorkoutSnapshot(state: .notStarted, participant: participant)
    }

    /// The figures the live board shows (``LiveWorkout/liveFigures(at:profile:)``): the state,
    /// running seconds, zone seconds and energy, from running aggregates, so a call costs the same
    /// whatever the workout's length. When no workout runs, the last ended one's final state.
    public func boardStatus() -> WorkoutSnapshot {
        state.withLock { state in
            // Mutated in place (optional chaining): a copy of the live workout would copy its samples.
            if let figures = state.live?.liveFigures(at: clock.now(), profile: profile) { return figures }
            return state.lastSnapshot ?? WorkoutSnapshot(state: .notStarted, participant: participant)
        }
    }

    /// The workout in progress (running, paused or stopped), nil when none: its state, start and
    /// activity, read without analysing its samples.
    public func activeSession() -> WorkoutSession? {
        state.withLock { state in
            guard let session = state.live?.session, session.isActive else { return nil }
            return session
        }
    }

    /// Runs one control request (restoring first if needed).
    public func handle(_ request: WorkoutControlRequest) async throws(WorkoutError) -> WorkoutSnapshot {
        try await restore()
        switch request {
        case .start(let activity, let devices, let types):
            return try await start(activity: activity, devices: devices, types: types)
        case .pause: return try await pause()
        case .resume: return try await resume()
        case .lap: return try await lap()
        case .marker(let note):
            var metadata = Metadata()
            if let note { metadata["healthgate.note"] = .string(note) }
            return try await marker(metadata: metadata)
        case .activity(let type): return try await beginNewActivity(type)
        case .end: return try await end()
        case .status: return status()
        }
    }

    /// Workouts ended but not yet handed to the bus.
    public var pendingWorkouts: [Workout] { state.withLock { $0.pending } }

    /// The control commands, for the control socket: one handler per
    /// ``WorkoutControlRequest/commands`` name. Each reads its ``WorkoutControlRequest``, answers
    /// a ``WorkoutSnapshot`` as JSON and throws ``WorkoutError``.
    public func controlHandlers() -> [String: @Sendable (JSONValue) async throws -> JSONValue] {
        var handlers: [String: @Sendable (JSONValue) async throws -> JSONValue] = [:]
        for command in WorkoutControlRequest.commands {
            handlers[command] = { arguments in
                let request = try WorkoutControlRequest(command: command, arguments: arguments)
                return try JSONValue.encoding(try await self.handle(request))
            }
        }
        return handlers
    }

    // MARK: Restore

    /// Rebuilds the workout in progress, and any ended one not yet stored, from the store; once
    /// per controller (later calls return at once).
    /// - Throws: ``WorkoutError/Code/persistence`` when the store cannot be read (the next call
    ///   tries again).
    public func restore() async throws(WorkoutError) {
        try await onQueue { () throws(WorkoutError) in try self.restoreOnQueue() }
    }

    private func restoreOnQueue() throws(WorkoutError) {
        guard !state.withLock({ $0.restoreDone }) else { return }
        let journaled = try store.journaledWorkouts().filter { $0.definition.participant == participant }
        var restored: [LiveWorkout] = []
        for workout in journaled {
            let start = workout.entries.first?.date ?? clock.now()
            let records = try committedRecords(of: workout.definition.types, devices: workout.definition.devices, endingFrom: start)
            restored.append(try LiveWorkout.replay(workout, records: records))
        }
        // An ended one is built with every sample; an open one keeps only its recent ones.
        let ended = restored.filter { $0.session.state == .ended }.map(finished)
        let open = restored.filter { $0.session.state != .ended }.map(bounded)
        if open.count > 1 {
            logger.error(
                "the store holds \(open.count) open workouts; continuing the newest, \(open.dropLast().map { "\($0.session.id)" }.joined(separator: ", ")) stay in the store")
        }
        state.withLock { state in
            state.live = open.last
            state.pending.append(contentsOf: ended)
            state.restoreDone = true
        }
        if let live = open.last {
            let session = live.session
            logger.notice(
                "restored workout \(session.id) after a restart: \(session.activityType.rawValue), \(session.state.rawValue), started "
                    + "\(session.startDate.map(RFC3339.string(from:)) ?? "-") with \(String(count: live.builder.droppedCount + live.builder.samples.count, "committed sample")); "
                    + "time while the gateway was down counts as \(session.state == .running ? "running time (a heart-rate gap)" : "paused")")
        }
        if !ended.isEmpty { logger.notice("restored \(String(count: ended.count, "ended workout")) waiting to be stored") }
    }

    /// Rebuilds the workout in progress, and those ended and not yet stored, from the journal
    /// and the committed samples, as a restart does: after the wall clock stepped and the store
    /// moved their dates (``HealthStore/correctClock(onto:)``), so that duration, zones and
    /// energy are measured on one time line.
    /// - Throws: ``WorkoutError/Code/persistence`` when the store cannot be read; the workout
    ///   then goes on as it was.
    public func clockCorrected() async throws(WorkoutError) {
        try await onQueue { () throws(WorkoutError) in
            let journaled = try self.store.journaledWorkouts().filter { $0.definition.participant == self.participant }
            var replayed: [SampleID: LiveWorkout] = [:]
            for workout in journaled {
                let start = workout.entries.first?.date ?? self.clock.now()
                let records = try self.committedRecords(
                    of: workout.definition.types, devices: workout.definition.devices, endingFrom: start)
                replayed[workout.definition.id] = try LiveWorkout.replay(workout, records: records)
            }
            // An ended one is built with every sample; an open one keeps only its recent ones.
            let open = replayed.filter { $0.value.session.state != .ended }.mapValues(self.bounded)
            self.state.withLock { state in
                if let id = state.live?.session.id, let live = open[id] { state.live = live }
                state.pending = state.pending.map { replayed[$0.id].map(self.finished) ?? $0 }
            }
        }
    }

    // MARK: Sink role

    /// Quantity samples, quantity series and heartbeat series; never workouts (it publishes those).
    public func accepts(_ record: HealthRecord) -> Bool {
        switch record {
        case .quantity, .quantitySeries, .heartbeatSeries: true
        case .workout, .correlation: false
        }
    }

    /// Restores from the store, then feeds every batch to the live workout until the bus finishes.
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        do {
            try await restore()
        } catch {
            logger.error("cannot restore the workout from the store: \(error)")
            throw error
        }
        while let batch = await inbox.next() {
            ingest(batch)
        }
    }

    /// `records` without those of someone else's devices (`othersDevices`) while the live workout
    /// collects from every device; called outside the state's lock, as `othersDevices` takes a
    /// lock of its own.
    private func ownRecords(_ records: [HealthRecord]) -> [HealthRecord] {
        guard let devices = state.withLock({ $0.live.map { $0.session.devices } }) else { return records }
        return ownRecords(records, devices: devices)
    }

    /// `records` without those of someone else's devices when `devices` (a workout's list) is nil.
    private func ownRecords(_ records: [HealthRecord], devices: [String]?) -> [HealthRecord] {
        guard devices == nil, let others = othersDevices?() else { return records }
        return ownRecords(records, excluding: others)
    }

    /// `records` without those of the devices `others` names.
    private func ownRecords(_ records: [HealthRecord], excluding others: [String]) -> [HealthRecord] {
        guard !others.isEmpty else { return records }
        let selection = IdentitySelection(others)
        return records.filter { record in record.device.map { !selection.matches($0) } ?? true }
    }

    /// The committed records of a workout of `types` from `devices` (nil: every device but
    /// someone else's) since `start`. The store selects the devices (in a class, a workout's end
    /// reads its own strap's samples, not the class's); the same rule is applied here again, as
    /// the store may return more (``WorkoutStateStore/committedRecords(of:endingFrom:devices:excluding:)``),
    /// and the builder keeps only the records of `devices` besides.
    private func committedRecords(
        of types: [QuantityType], devices: [String]?, endingFrom start: Date
    ) throws(WorkoutError) -> [HealthRecord] {
        let others = devices == nil ? othersDevices?() ?? [] : []
        return ownRecords(
            try store.committedRecords(of: types, endingFrom: start, devices: devices, excluding: others, person: participant),
            excluding: others)
    }

    /// How long a live workout keeps its samples in memory when its store commits them
    /// (``WorkoutStateStore/recordsSamples``): the rest is read back from the store when every
    /// sample is needed (`status`, a command's answer, the end). A class of 30 collects 50
    /// samples a second; kept whole, an hour's workouts grew the gateway by about 100 bytes
    /// per sample (heaptrack: the samples and the set of their ids). Far longer than the
    /// store's batch window (0.1 s by default), so a dropped sample is committed already.
    public static let keptSeconds = 30.0

    /// `live`, keeping only its recent samples when the store commits them.
    private func bounded(_ live: LiveWorkout) -> LiveWorkout {
        guard store.recordsSamples else { return live }
        var live = live
        live.keepRecentSamples(seconds: Self.keptSeconds, profile: profile)
        return live
    }

    /// `live`'s figures at `date`, with every sample: those it dropped are read back from the
    /// store (on the calling thread). If the store cannot be read, the figures of the samples
    /// at hand, and a warning.
    private func fullSnapshot(of live: LiveWorkout, at date: Date) -> WorkoutSnapshot {
        var live = live
        if !live.hasEverySample, let start = live.session.startDate {
            do {
                live.collectCommitted(try committedRecords(of: live.session.types, devices: live.session.devices, endingFrom: start))
            } catch {
                logger.warning(
                    "workout \(live.session.id): the samples it dropped cannot be read back from the store (\(error)); "
                        + "its figures are those of its last \(Int(Self.keptSeconds)) s")
            }
        }
        return live.snapshot(at: date, profile: profile)
    }

    /// The finished workout of `live`, naming the devices it left to others (``ownRecords(_:devices:)``).
    private func finished(_ live: LiveWorkout) -> Workout {
        var workout = live.workout(profile: profile)
        if live.session.devices == nil, let others = othersDevices?(), !others.isEmpty {
            workout.metadata[.excludedDevices] = .string(others.joined(separator: ","))
        }
        return workout
    }

    /// Offers records to the live workout; those it wants are collected (see
    /// ``LiveWorkoutBuilder``). Returns how many were collected.
    @discardableResult
    public func ingest(_ records: [HealthRecord]) -> Int {
        let records = ownRecords(records)
        return state.withLock { state in
            guard let refusedBefore = state.live?.builder.refusedCount else { return 0 }
            // Collected in place: a copy of the live workout would copy every sample collected
            // so far on each batch that adds one (copy on write), an hour of readings per batch
            // with a class of participants.
            let added = state.live?.collect(records) ?? 0
            if refusedBefore == 0, let live = state.live, live.builder.refusedCount > 0 {
                logger.error(
                    "workout \(live.session.id) is full (\(LiveWorkoutBuilder.capacity) samples); "
                        + "further samples are not collected into it (they still reach the other sinks)")
            }
            return added
        }
    }

    // MARK: Source role

    /// Publishes finished workouts (those restored first) until cancelled.
    public func run(context: SourceContext) async throws {
        state.withLock { $0.publisher = context.publisher }
        defer { state.withLock { $0.publisher = nil } }
        try await restore()
        while true {
            await publishPending()
            // Workouts are published by `end` as soon as they end; this only retries what
            // was left when no publisher was set.
            try await clock.sleep(for: .seconds(10))
        }
    }

    // MARK: Internals

    private func perform(
        _ action: WorkoutAction, newActivity: WorkoutJournalEntry.NewActivity? = nil, segmentStart: Date? = nil,
        metadata: Metadata = Metadata()
    ) async throws(WorkoutError) -> WorkoutSnapshot {
        let (transition, snapshot) = try await onQueue { () throws(WorkoutError) -> (WorkoutTransition, WorkoutSnapshot) in
            // Tried on a copy first: the live state changes only once the store has the entry,
            // and the lock is not held while the store commits.
            guard var trial = self.state.withLock({ $0.live }) else {
                throw WorkoutError(.noSession, "no workout is in progress; start one first", action: action)
            }
            let entry = WorkoutJournalEntry(
                action: action, date: self.clock.now(), newActivity: newActivity, segmentStart: segmentStart,
                metadata: metadata, clockBase: self.clockBase?())
            let transition = try trial.apply(entry)
            guard transition != .ignored else { return (transition, self.fullSnapshot(of: trial, at: entry.date)) }
            try self.store.append([entry], from: trial.journalCount - 1, of: trial.session.definition)
            let (applied, live) = self.state.withLock { state -> (WorkoutTransition, LiveWorkout) in
                // Commands run one at a time on this queue, so the live session is the one the
                // trial started from and the entry applies the same way; only the collected
                // samples may have grown meanwhile.
                guard var live = state.live else { return (transition, trial) }
                do {
                    try live.apply(entry)
                } catch {
                    self.logger.error("workout \(action.rawValue) was committed but does not apply to the live state: \(error)")
                }
                state.live = live
                return (transition, live)
            }
            // Outside the lock: it may read the workout's samples back from the store.
            return (applied, self.fullSnapshot(of: live, at: entry.date))
        }
        if transition == .ignored {
            logger.debug("\(action.rawValue) ignored: the workout is already \(snapshot.state.rawValue)")
        } else {
            logger.info("workout \(action.rawValue): now \(snapshot.state.rawValue)")
        }
        return snapshot
    }

    /// Runs `body` on the controller's queue, after restoring if that has not happened yet.
    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws(WorkoutError) -> T) async throws(WorkoutError) -> T {
        try await executor.run { () throws(WorkoutError) -> T in
            try self.restoreOnQueue()
            return try body()
        }
    }

    /// How long ``end()`` waits for the store to hold the workout it ended (a class's end: all
    /// its workouts together): the configuration's `storeWaitSeconds`.
    public let storeWait: Duration

    /// `storeWaitSeconds`' default, within the CLI's 10 s for an answer.
    public static let defaultStoreWait = Duration.seconds(GatewayConfiguration().storeWaitSeconds)

    /// Hands the pending workouts to the bus; returns the IDs of those it handed over.
    @discardableResult
    private func publishPending() async -> Set<SampleID> {
        let (publisher, workouts) = state.withLock { state -> (SamplePublisher?, [Workout]) in
            guard let publisher = state.publisher else { return (nil, []) }
            let workouts = state.pending.filter { !state.publishing.contains($0.id) }
            state.publishing.formUnion(workouts.map(\.id))
            return (publisher, workouts)
        }
        guard let publisher, !workouts.isEmpty else { return [] }
        await publisher.publish(workouts.map(HealthRecord.workout))
        let ids = Set(workouts.map(\.id))
        state.withLock { state in
            state.pending.removeAll { ids.contains($0.id) }
            state.publishing.subtract(ids)
        }
        for workout in workouts {
            logger.info("published workout \(workout.id)")
            // Not awaited on the queue: the store only forgets a workout already on the bus.
            executor.queue.async {
                do {
                    try self.store.handedOver(workout.id)
                } catch {
                    self.logger.error("cannot mark workout \(workout.id) as handed over: \(error)")
                }
            }
        }
        return ids
    }
}

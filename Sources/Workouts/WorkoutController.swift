public import Foundation
public import HealthModel
public import SampleBus
import Synchronization

/// Owns the live workout: the session, the builder, the state file and the control commands.
///
/// In the gateway it plays two roles, both added by the executable beside the configured plugins:
/// - a ``SampleSink`` that feeds the bus's heart-rate and pedometer samples to the builder
///   (it accepts quantity samples and heartbeat series, never workouts);
/// - a ``SampleSource`` whose `run` publishes finished workouts as ``HealthRecord/workout(_:)``
///   (so every sink that accepts workouts stores them) and checkpoints the session periodically.
///
/// **Persistence.** The live session and the finished-but-unpublished workouts are saved to
/// `<stateDirectory>/workout-session.json` (written to a temporary file and renamed) on every
/// state change and every `checkpointInterval` while samples arrive. A new controller restores
/// the file: a running workout keeps running (the time the gateway was down counts as running
/// time and shows as a heart-rate gap), a paused one stays paused, and the restore is logged.
/// A workout ended while no source role was running is published when it next runs. A state
/// file that cannot be read is moved aside (`….corrupt-<time>`) and the error is logged. A
/// failed write is logged as an error and retried at the next checkpoint.
///
/// Thread-safe: state lives in a `Mutex`; the small state file is written while holding it, so
/// writes are never reordered.
public final class WorkoutController: SampleSink, SampleSource {
    private struct LiveWorkout: Codable, Sendable {
        var session: WorkoutSession
        var builder: LiveWorkoutBuilder
        var restored = false
    }

    private struct PersistedState: Codable {
        var version = 1
        var live: LiveWorkout?
        var pendingWorkouts: [Workout]
    }

    private struct State {
        var live: LiveWorkout?
        var pending: [Workout] = []
        var publishing: Set<SampleID> = []
        var publisher: SamplePublisher?
        var dirty = false
        var lastSnapshot: WorkoutSnapshot?
        var persistenceFailures = 0
    }

    /// The profile zones and energy come from.
    public let profile: UserProfile
    /// `<stateDirectory>/workout-session.json`.
    public let stateFile: URL
    private let clock: any GatewayClock
    private let ids: SampleIDGenerator
    private let logger: Logger
    private let checkpointInterval: Duration
    private let state = Mutex(State())

    /// Creates a controller and restores the state file if there is one.
    /// - Parameters:
    ///   - checkpointInterval: how often the source role saves a session that collected samples.
    public init(
        profile: UserProfile, stateDirectory: URL, clock: any GatewayClock, ids: SampleIDGenerator,
        logger: Logger, checkpointInterval: Duration = .seconds(10)
    ) {
        self.profile = profile
        self.stateFile = stateDirectory.appendingPathComponent("workout-session.json")
        self.clock = clock
        self.ids = ids
        self.logger = logger
        self.checkpointInterval = checkpointInterval
        restore()
    }

    /// A controller for a gateway: the profile from `configuration.profile`, the state file in
    /// the environment's state directory.
    /// - Throws: ``WorkoutError`` (``WorkoutError/Code/invalidProfile``) naming the profile key.
    public convenience init(configuration: GatewayConfiguration, environment: PluginEnvironment) throws(WorkoutError) {
        self.init(
            profile: try UserProfile.decode(configuration.profile),
            stateDirectory: environment.paths.stateDirectory, clock: environment.clock, ids: environment.ids,
            logger: environment.logger)
    }

    // MARK: Commands

    /// Starts a workout (prepare and start at once).
    /// - Parameters:
    ///   - devices: local identifiers or names to collect from; nil or empty collects from all.
    ///   - types: the types to collect; default ``WorkoutSession/defaultTypes``.
    /// - Throws: ``WorkoutError/Code/alreadyActive`` when a workout is in progress.
    @discardableResult
    public func start(
        activity: WorkoutActivityType, devices: [String]? = nil,
        types: [QuantityType] = WorkoutSession.defaultTypes
    ) throws(WorkoutError) -> WorkoutSnapshot {
        let snapshot = try state.withLock { state throws(WorkoutError) -> WorkoutSnapshot in
            if let live = state.live {
                throw WorkoutError(
                    .alreadyActive, "a \(live.session.activityType.rawValue) workout is already \(live.session.state.rawValue); end it first",
                    state: live.session.state, action: .start)
            }
            var session = WorkoutSession(
                id: ids.next(), activityType: activity, firstActivityID: ids.next(),
                devices: devices.flatMap { $0.isEmpty ? nil : $0 }, types: types)
            let now = clock.now()
            try session.apply(.prepare, at: now)
            try session.apply(.start, at: now)
            state.live = LiveWorkout(session: session, builder: LiveWorkoutBuilder())
            persist(&state)
            return makeSnapshot(of: state, at: now)
        }
        logger.info("started \(activity.rawValue) workout \(snapshot.workoutID.map(\.uuidString) ?? "")"
            + (devices.map { $0.isEmpty ? "" : " collecting from \($0.joined(separator: ", "))" } ?? ""))
        return snapshot
    }

    /// Pauses the workout; ignored when already paused.
    @discardableResult
    public func pause() throws(WorkoutError) -> WorkoutSnapshot { try perform(.pause) }

    /// Resumes the workout; ignored when already running.
    @discardableResult
    public func resume() throws(WorkoutError) -> WorkoutSnapshot { try perform(.resume) }

    /// Records a lap: an event from the previous lap (or the start) to now.
    @discardableResult
    public func lap() throws(WorkoutError) -> WorkoutSnapshot { try perform(.lap) }

    /// Records an instant marker with optional metadata.
    @discardableResult
    public func marker(metadata: Metadata = Metadata()) throws(WorkoutError) -> WorkoutSnapshot {
        try perform(.marker, metadata: metadata)
    }

    /// Records a segment event from `start` to now.
    @discardableResult
    public func segment(from start: Date) throws(WorkoutError) -> WorkoutSnapshot {
        try perform(.segment, segmentStart: start)
    }

    /// Closes the current activity and begins one of `type` (multisport).
    @discardableResult
    public func beginNewActivity(_ type: WorkoutActivityType) throws(WorkoutError) -> WorkoutSnapshot {
        try perform(.beginActivity, newActivity: (ids.next(), type))
    }

    /// Ends the workout, builds the ``Workout`` and publishes it (now if the source role runs,
    /// else when it next runs; it is kept in the state file until then).
    /// - Returns: the final snapshot, state `ended`.
    @discardableResult
    public func end() async throws(WorkoutError) -> WorkoutSnapshot {
        let (workout, snapshot) = try state.withLock { state throws(WorkoutError) -> (Workout, WorkoutSnapshot) in
            guard var live = state.live else {
                throw WorkoutError(.noSession, "no workout is in progress", action: .end)
            }
            let now = clock.now()
            try live.session.apply(.end, at: now)
            let workout = buildWorkout(live)
            state.live = live
            let snapshot = makeSnapshot(of: state, at: now)
            state.live = nil
            state.pending.append(workout)
            state.lastSnapshot = snapshot
            persist(&state)
            return (workout, snapshot)
        }
        logger.info(
            "ended \(workout.activityType.rawValue) workout \(workout.id): \(Int(workout.duration)) s running, "
                + "\(workout.sampleIDs.count) sample(s)")
        await publishPending()
        return snapshot
    }

    /// The live state; when no workout runs, the last ended one's final state (or `notStarted`).
    public func status() -> WorkoutSnapshot {
        state.withLock { state in
            if state.live != nil { return makeSnapshot(of: state, at: clock.now()) }
            return state.lastSnapshot ?? WorkoutSnapshot(state: .notStarted)
        }
    }

    /// Workouts ended but not yet handed to the bus.
    public var pendingWorkouts: [Workout] { state.withLock { $0.pending } }

    /// How many state-file writes failed (each was logged).
    public var persistenceFailures: Int { state.withLock { $0.persistenceFailures } }

    /// The control commands, for the control socket: `workout.start` (`{"activity": "running",
    /// "devices": ["AA:BB:…"]}`), `workout.pause`, `workout.resume`, `workout.lap`,
    /// `workout.marker`, `workout.activity` (`{"activity": "cycling"}`), `workout.end` and
    /// `workout.status`. Each answers a ``WorkoutSnapshot`` as JSON and throws ``WorkoutError``.
    public func controlHandlers() -> [String: @Sendable (JSONValue) async throws -> JSONValue] {
        [
            "workout.start": { arguments in
                let activity = try Self.activity(arguments)
                let devices = try Self.strings(arguments["devices"], key: "devices")
                let types = try Self.strings(arguments["types"], key: "types").map { names in
                    try names.map { name throws(WorkoutError) -> QuantityType in
                        guard let type = QuantityType.named(name) else {
                            throw WorkoutError(.invalidArgument, "types: unknown quantity type \"\(name)\"")
                        }
                        return type
                    }
                }
                return try JSONValue.encoding(
                    self.start(activity: activity, devices: devices, types: types ?? WorkoutSession.defaultTypes))
            },
            "workout.pause": { _ in try JSONValue.encoding(self.pause()) },
            "workout.resume": { _ in try JSONValue.encoding(self.resume()) },
            "workout.lap": { _ in try JSONValue.encoding(self.lap()) },
            "workout.marker": { arguments in
                var metadata = Metadata()
                if let note = arguments["note"]?.stringValue { metadata["healthgate.note"] = .string(note) }
                return try JSONValue.encoding(self.marker(metadata: metadata))
            },
            "workout.activity": { arguments in
                try JSONValue.encoding(self.beginNewActivity(try Self.activity(arguments)))
            },
            "workout.end": { _ in try JSONValue.encoding(await self.end()) },
            "workout.status": { _ in try JSONValue.encoding(self.status()) },
        ]
    }

    // MARK: Sink role

    /// Quantity samples and heartbeat series; never workouts (it publishes those).
    public func accepts(_ record: HealthRecord) -> Bool {
        switch record {
        case .quantity, .heartbeatSeries: true
        case .workout: false
        }
    }

    /// Feeds every batch to the builder until the bus finishes, then saves the session.
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        while let batch = await inbox.next() {
            ingest(batch)
        }
        checkpoint()
    }

    /// Offers records to the live workout; those it wants are collected (see
    /// ``LiveWorkoutBuilder``). Returns how many were collected.
    @discardableResult
    public func ingest(_ records: [HealthRecord]) -> Int {
        state.withLock { state in
            guard var live = state.live else { return 0 }
            let refusedBefore = live.builder.refusedCount
            var added = 0
            for record in records where live.builder.add(record, session: live.session) { added += 1 }
            if refusedBefore == 0, live.builder.refusedCount > 0 {
                logger.error(
                    "workout \(live.session.id) is full (\(LiveWorkoutBuilder.capacity) samples); "
                        + "further samples are not collected into it (they still reach the other sinks)")
            }
            if added > 0 || live.builder.refusedCount != refusedBefore {
                state.live = live
                state.dirty = true
            }
            return added
        }
    }

    // MARK: Source role

    /// Publishes finished workouts and checkpoints the session every `checkpointInterval` until
    /// cancelled; saves once more on the way out.
    public func run(context: SourceContext) async throws {
        state.withLock { $0.publisher = context.publisher }
        defer {
            state.withLock { $0.publisher = nil }
            checkpoint()
        }
        while true {
            await publishPending()
            checkpoint()
            try await clock.sleep(for: checkpointInterval)
        }
    }

    /// Saves the session now if samples arrived since the last save.
    public func checkpoint() {
        state.withLock { state in
            if state.dirty { persist(&state) }
        }
    }

    // MARK: Internals

    private func perform(
        _ action: WorkoutAction, newActivity: (id: SampleID, type: WorkoutActivityType)? = nil,
        segmentStart: Date? = nil, metadata: Metadata = Metadata()
    ) throws(WorkoutError) -> WorkoutSnapshot {
        let (transition, snapshot) = try state.withLock { state throws(WorkoutError) -> (WorkoutTransition, WorkoutSnapshot) in
            guard var live = state.live else {
                throw WorkoutError(.noSession, "no workout is in progress; start one first", action: action)
            }
            let now = clock.now()
            let transition = try live.session.apply(
                action, at: now, newActivity: newActivity, segmentStart: segmentStart, metadata: metadata)
            state.live = live
            if transition != .ignored { persist(&state) }
            return (transition, makeSnapshot(of: state, at: now))
        }
        if transition == .ignored {
            logger.debug("\(action.rawValue) ignored: the workout is already \(snapshot.state.rawValue)")
        } else {
            logger.info("workout \(action.rawValue): now \(snapshot.state.rawValue)")
        }
        return snapshot
    }

    private func makeSnapshot(of state: State, at now: Date) -> WorkoutSnapshot {
        guard let live = state.live else { return state.lastSnapshot ?? WorkoutSnapshot(state: .notStarted) }
        let session = live.session
        let start = session.startDate ?? now
        let end = session.endDate ?? max(now, start)
        let analysis = WorkoutAnalysis.analyse(
            samples: live.builder.samples, types: session.types, timeline: session.timeline,
            window: (start, end), isLive: session.endDate == nil, profile: profile)
        return WorkoutSnapshot(session: session, analysis: analysis, restored: live.restored)
    }

    private func buildWorkout(_ live: LiveWorkout) -> Workout {
        var session = live.session
        let start = session.startDate ?? clock.now()
        let end = session.endDate ?? start
        let analyse = { (window: (Date, Date)) in
            WorkoutAnalysis.analyse(
                samples: live.builder.samples, types: session.types, timeline: session.timeline,
                window: window, isLive: false, profile: self.profile)
        }
        let total = analyse((start, end))
        session.setActivityStatistics(session.activities.map { analyse(($0.startDate, $0.endDate ?? end)).statistics })
        var metadata = Metadata()
        metadata["healthgate.gapThresholdSeconds"] = .double(profile.gapThreshold)
        metadata["healthgate.gapCount"] = .integer(Int64(total.gaps.count))
        metadata["healthgate.gapSeconds"] = .double(total.gaps.reduce(0) { $0 + $1.seconds })
        if let source = total.energySource { metadata["healthgate.energySource"] = .string(source.rawValue) }
        if let maximum = total.zones?.maximumHeartRate { metadata["healthgate.maximumHeartRate"] = .double(maximum) }
        for (zone, seconds) in zip(total.zones?.zones ?? [], total.zoneSeconds) {
            metadata[MetadataKey("healthgate.zone\(zone.number)Seconds")] = .double(seconds)
        }
        if let devices = session.devices { metadata["healthgate.devices"] = .string(devices.joined(separator: ",")) }
        if live.restored { metadata["healthgate.restoredAfterRestart"] = .bool(true) }
        return Workout(
            id: session.id, activityType: session.activityType, startDate: start, endDate: end,
            duration: total.elapsedSeconds, events: session.events, activities: session.activities,
            statistics: total.statistics, metadata: metadata, sampleIDs: live.builder.sampleIDs)
    }

    private func publishPending() async {
        let (publisher, workouts) = state.withLock { state -> (SamplePublisher?, [Workout]) in
            guard let publisher = state.publisher else { return (nil, []) }
            let workouts = state.pending.filter { !state.publishing.contains($0.id) }
            state.publishing.formUnion(workouts.map(\.id))
            return (publisher, workouts)
        }
        guard let publisher, !workouts.isEmpty else { return }
        await publisher.publish(workouts.map(HealthRecord.workout))
        let ids = Set(workouts.map(\.id))
        state.withLock { state in
            state.pending.removeAll { ids.contains($0.id) }
            state.publishing.subtract(ids)
            persist(&state)
        }
        for workout in workouts { logger.info("published workout \(workout.id)") }
    }

    private func persist(_ state: inout State) {
        do {
            let directory = stateFile.deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            if state.live == nil, state.pending.isEmpty {
                if FileManager.default.fileExists(atPath: stateFile.path) {
                    try FileManager.default.removeItem(at: stateFile)
                }
            } else {
                let data = try HealthJSON.makeEncoder().encode(
                    PersistedState(live: state.live, pendingWorkouts: state.pending))
                // .atomic writes a temporary file in the same directory and renames it over the
                // old one (rename(2) is atomic), so a crash leaves the old or the new file.
                try data.write(to: stateFile, options: .atomic)
            }
            state.dirty = false
        } catch {
            state.persistenceFailures += 1
            state.dirty = true
            logger.error("cannot save the workout session to \(stateFile.path): \(error); will retry")
        }
    }

    private func restore() {
        let data: Data
        do {
            guard FileManager.default.fileExists(atPath: stateFile.path) else { return }
            data = try Data(contentsOf: stateFile)
        } catch {
            logger.error("cannot read the workout session file \(stateFile.path): \(error)")
            return
        }
        let persisted: PersistedState
        do {
            persisted = try HealthJSON.makeDecoder().decode(PersistedState.self, from: data)
        } catch {
            let aside = stateFile.appendingPathExtension("corrupt-\(Int(clock.now().timeIntervalSince1970))")
            do {
                try FileManager.default.moveItem(at: stateFile, to: aside)
                logger.error("the workout session file \(stateFile.path) is unreadable (\(error)); moved it to \(aside.path)")
            } catch let moveError {
                logger.error("the workout session file \(stateFile.path) is unreadable (\(error)) and cannot be moved aside: \(moveError)")
            }
            return
        }
        state.withLock { state in
            state.pending = persisted.pendingWorkouts
            if var live = persisted.live {
                live.restored = true
                state.live = live
            }
        }
        if let live = persisted.live {
            let session = live.session
            logger.notice(
                "restored workout \(session.id) after a restart: \(session.activityType.rawValue), \(session.state.rawValue), started "
                    + "\(session.startDate.map(RFC3339.string(from:)) ?? "-") with \(live.builder.samples.count) sample(s); "
                    + "time while the gateway was down counts as \(session.state == .running ? "running time (a heart-rate gap)" : "paused")")
        }
        if !persisted.pendingWorkouts.isEmpty {
            logger.notice("restored \(persisted.pendingWorkouts.count) ended workout(s) waiting to be published")
        }
    }

    private static func activity(_ arguments: JSONValue) throws(WorkoutError) -> WorkoutActivityType {
        guard let name = arguments["activity"]?.stringValue else {
            throw WorkoutError(.invalidArgument, "activity: required, one of \(WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let type = WorkoutActivityType(rawValue: name) else {
            throw WorkoutError(
                .invalidArgument, "activity: unknown \"\(name)\"; known: \(WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return type
    }

    private static func strings(_ value: JSONValue?, key: String) throws(WorkoutError) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text.split(separator: ",").map(String.init)
        case .array(let items)?:
            return try items.map { item throws(WorkoutError) -> String in
                guard let text = item.stringValue else { throw WorkoutError(.invalidArgument, "\(key): expected strings") }
                return text
            }
        default: throw WorkoutError(.invalidArgument, "\(key): expected an array of strings")
        }
    }
}

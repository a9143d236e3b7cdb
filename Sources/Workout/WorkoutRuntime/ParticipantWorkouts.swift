public import Workouts
import AsyncPrimitives
import FoundationEssentials
public import HealthModel
public import GatewayRuntime
public import SampleBus
import Synchronization

/// Group workouts: one ``WorkoutController`` per participant beside the gateway's own, so that a
/// class trains at once, each person's workout with their devices, zones and energy.
///
/// In the gateway it plays the roles a single controller plays (added by the executable):
/// - a ``SampleSink`` that offers every batch to every controller (each collects only from the
///   devices its workout was started with);
/// - a ``SampleSource`` that publishes every controller's finished workouts.
///
/// **Commands.** Every `workout.*` command takes an optional `participant` (one person's workout)
/// or `"all": true` (every participant's, answered as ``GroupAnswer``); without either it is the
/// gateway's own workout, the same as with no participants configured. `participant.assign` moves a device to
/// a participant (creating one with the default profile if the name is new) and
/// `participant.list` lists them. An assignment is committed to the store before it is answered,
/// and a restart replays the stored assignments over the configured ones. A participant's
/// workout collects from the devices the participant wears when it starts.
///
/// Isolation: the roster lives in a `Mutex`; assignments and restores run one at a time on the
/// group's serial queue (the store blocks).
public final class ParticipantWorkouts: SampleSink, SampleSource {
    private struct State {
        var roster: ParticipantRoster
        var controllers: [String: WorkoutController] = [:]
        var restoreDone = false
        var additions: AsyncStream<WorkoutController>.Continuation?
        /// The devices heard lately, newest last, at most ``heardDevicesLimit``: what tells an
        /// assignment which other identities name the same strap.
        var heardDevices: [Device] = []
    }

    /// How many distinct devices ``State/heardDevices`` keeps (the oldest goes first).
    static let heardDevicesLimit = 128

    /// The gateway's own workout (no participant), with the default profile.
    public let main: WorkoutController
    private let store: any WorkoutStateStore & ParticipantAssignmentStore
    private let clock: any GatewayClock
    private let clockBase: (@Sendable () -> ClockBase)?
    private let ids: SampleIDGenerator
    private let logger: Logger
    private let executor = QueueExecutor(label: "healthgate.participants")
    private let state: Mutex<State>
    /// The roster as the gateway's own workout reads it (a lock of its own: read while a
    /// controller's state is not held, never while this group's is).
    private let worn: WornDevices

    /// The roster the gateway's own workout reads to leave the participants' devices alone.
    private final class WornDevices: Sendable {
        let roster: Mutex<ParticipantRoster>
        init(_ roster: ParticipantRoster) { self.roster = Mutex(roster) }
    }

    /// A group for `roster`; nothing is read from `store` until ``restore()``.
    public init(
        roster: ParticipantRoster, store: any WorkoutStateStore & ParticipantAssignmentStore, clock: any GatewayClock,
        ids: SampleIDGenerator, logger: Logger, clockBase: (@Sendable () -> ClockBase)? = nil
    ) {
        self.clockBase = clockBase
        self.store = store
        self.clock = clock
        self.ids = ids
        self.logger = logger
        // The gateway's own workout leaves the participants' straps to their wearers' workouts.
        let worn = WornDevices(roster)
        self.worn = worn
        main = WorkoutController(
            profile: roster.defaultProfile, store: store, clock: clock, ids: ids, logger: logger, clockBase: clockBase,
            othersDevices: { worn.roster.withLock { $0.participants.flatMap(\.devices) } })
        var initial = State(roster: roster)
        for participant in roster.participants {
            initial.controllers[participant.name] = WorkoutController(
                profile: participant.profile, store: store, clock: clock, ids: ids,
                logger: logger.child(participant.name), participant: participant.name, clockBase: clockBase)
        }
        state = Mutex(initial)
    }

    /// The participants and their devices now.
    public var roster: ParticipantRoster { state.withLock { $0.roster } }

    /// Each participant's workout status (``WorkoutController/status()``), by name.
    public func statuses() -> [String: WorkoutSnapshot] {
        state.withLock { $0.controllers }.mapValues { $0.status() }
    }

    /// Each participant's board figures (``WorkoutController/boardStatus()``), by name: what the
    /// live board reads whenever a tile changes, at a cost independent of the workouts' length.
    public func boardStatuses() -> [String: WorkoutSnapshot] {
        state.withLock { $0.controllers }.mapValues { $0.boardStatus() }
    }

    /// The controller of `participant`.
    public func controller(for participant: String) -> WorkoutController? {
        state.withLock { $0.controllers[participant] }
    }

    // MARK: Restore

    /// Replays the stored assignments over the configured roster and adds a controller for every
    /// participant the store knows (by assignment or by a journaled workout); once per group.
    /// - Throws: ``WorkoutError/Code/persistence`` when the store cannot be read (the next call
    ///   tries again).
    public func restore() async throws(WorkoutError) {
        try await executor.run { () throws(WorkoutError) in try self.restoreOnQueue() }
    }

    private func restoreOnQueue() throws(WorkoutError) {
        guard !state.withLock({ $0.restoreDone }) else { return }
        let assignments = try store.participantAssignments()
        let journaledNames = try store.journaledWorkouts().compactMap(\.definition.participant)
        var roster = state.withLock { $0.roster }
        for assignment in assignments {
            do {
                try roster.apply(assignment)
            } catch {
                logger.error("stored assignment of \(assignment.device) to \(assignment.participant) is not applied: \(error)")
            }
        }
        for name in journaledNames where roster.participant(named: name) == nil {
            logger.warning("participant \(name) has a workout in the store but is not configured; using the default profile")
            do {
                try roster.add(Participant(name: name, profile: roster.defaultProfile))
            } catch {
                logger.error("the workout of \(name) stays in the store: \(error)")
            }
        }
        state.withLock { state in
            state.roster = roster
            self.worn.roster.withLock { $0 = roster }
            for participant in roster.participants where state.controllers[participant.name] == nil {
                addController(participant, to: &state)
            }
            state.restoreDone = true
        }
        if !assignments.isEmpty { logger.info("restored \(String(count: assignments.count, "device assignment")) from the store") }
    }

    private func addController(_ participant: Participant, to state: inout State) {
        let controller = WorkoutController(
            profile: participant.profile, store: store, clock: clock, ids: ids, logger: logger.child(participant.name),
            participant: participant.name, clockBase: clockBase)
        state.controllers[participant.name] = controller
        state.additions?.yield(controller)
    }

    /// Every workout rebuilt after the clock stepped (``WorkoutController/clockCorrected()``);
    /// one that cannot be read back goes on as it was, and the log says so.
    public func clockCorrected() async {
        for controller in [main] + state.withLock({ Array($0.controllers.values) }) {
            do {
                try await controller.clockCorrected()
            } catch {
                logger.error("clock: workout of \(controller.participant ?? "the gateway") not rebuilt after the clock stepped: \(error)")
            }
        }
    }

    // MARK: Commands

    /// Moves `device` to `participant` (creating the participant with the default profile if the
    /// name is new; a name that differs from a participant's only in case is theirs), committed
    /// to the store before it returns. A workout already running keeps
    /// its devices; the participant's next workout collects from the new one.
    /// - Throws: ``WorkoutError/Code/invalidArgument`` for a bad name or device,
    ///   ``WorkoutError/Code/persistence`` when the store cannot commit it (nothing changes).
    @discardableResult
    public func assign(device: String, to participant: String) async throws(WorkoutError) -> ParticipantRoster {
        try await executor.run { () throws(WorkoutError) -> ParticipantRoster in
            try self.restoreOnQueue()
            var trial = self.state.withLock { $0.roster }
            // A name that differs from a participant's only in case is that participant, not a new one.
            let name = Self.participantName(participant.trimmed(), among: trial.participants.map(\.name))
            let assignment = ParticipantAssignment(device: device, participant: name)
            // The strap's other names, from the devices heard that this identity names.
            let identity = DeviceIdentity(device)
            let aliases = self.state.withLock { $0.heardDevices }
                .filter { $0.identities.contains(identity) }
                .reduce(into: Set<DeviceIdentity>()) { $0.formUnion($1.identities) }
            try trial.apply(assignment, aliases: aliases)
            try self.store.assign(assignment)
            self.state.withLock { state in
                state.roster = trial
                self.worn.roster.withLock { $0 = trial }
                for participant in trial.participants where state.controllers[participant.name] == nil {
                    self.addController(participant, to: &state)
                }
            }
            self.logger.info("device \(device) is worn by \(participant)")
            return trial
        }
    }

    /// Runs one workout command for `target`.
    /// - Returns: one snapshot for the gateway's own workout or one participant's; for
    ///   ``Target/all``, every participant's snapshot and the errors of those that refused.
    public func handle(_ request: WorkoutControlRequest, for target: Target) async throws(WorkoutError) -> GroupAnswer {
        try await restore()
        switch target {
        case .main:
            return GroupAnswer(workouts: [try await main.handle(request)])
        case .participant(let given):
            let name = Self.participantName(given, among: roster.participants.map(\.name))
            guard let participant = roster.participant(named: name), let controller = controller(for: name) else {
                throw WorkoutError(.invalidArgument, Self.unknownParticipant(given, among: roster.participants.map(\.name)))
            }
            return GroupAnswer(workouts: [try await run(request, participant, controller)])
        case .all:
            var answer = GroupAnswer()
            let participants = roster.participants
            guard !participants.isEmpty else {
                throw WorkoutError(.invalidArgument, "all: no participants are configured or assigned")
            }
            for participant in participants {
                guard let controller = controller(for: participant.name) else { continue }
                do {
                    answer.workouts.append(try await run(request, participant, controller))
                } catch {
                    answer.errors.append("\(participant.name): \(error.message)")
                }
            }
            return answer
        }
    }

    /// The participant `given` names: that name, else the one name it matches ignoring case.
    static func participantName(_ given: String, among names: [String]) -> String {
        guard !names.contains(given) else { return given }
        let sameLetters = names.filter { $0.lowercased() == given.lowercased() }
        return sameLetters.count == 1 ? sameLetters[0] : given
    }

    /// "no participant", with the one most likely meant and every participant there is.
    static func unknownParticipant(_ given: String, among names: [String]) -> String {
        guard !names.isEmpty else {
            return "participant: no participant \"\(given)\": none are configured or assigned"
        }
        var message = "participant: no participant \"\(given)\""
        if let meant = KeySuggestion.suggestion(for: given, among: names) { message += "; did you mean \(meant)?" }
        return message + " (participants: \(names.joined(separator: ", ")))"
    }

    private func run(
        _ request: WorkoutControlRequest, _ participant: Participant, _ controller: WorkoutController
    ) async throws(WorkoutError) -> WorkoutSnapshot {
        guard case .start(let activity, let devices, let types) = request else { return try await controller.handle(request) }
        // A participant's workout collects from their own devices only: never from everyone's.
        let worn = devices ?? participant.devices
        guard !worn.isEmpty else {
            throw WorkoutError(
                .invalidArgument,
                "\(participant.name) wears no device; 'healthgate participant assign DEVICE \(participant.name)' first",
                action: .start)
        }
        return try await controller.handle(.start(activity: activity, devices: worn, types: types))
    }

    /// Whose workout a command is for.
    public enum Target: Hashable, Sendable {
        /// The gateway's own workout.
        case main
        /// One participant's.
        case participant(String)
        /// Every participant's.
        case all

        /// Reads `participant` (a name) or `all` (true) from a command's arguments.
        /// - Throws: ``WorkoutError/Code/invalidArgument`` when both are given or one is of the
        ///   wrong type.
        public init(arguments: JSONValue?) throws(WorkoutError) {
            let name = arguments?["participant"]
            let all = arguments?["all"]
            switch (name, all) {
            case (nil, nil), (.null?, nil), (nil, .bool(false)?):
                self = .main
            case (.string(let name)?, nil), (.string(let name)?, .bool(false)?):
                self = .participant(name)
            case (nil, .bool(true)?), (.null?, .bool(true)?):
                self = .all
            case (.string?, .bool(true)?):
                throw WorkoutError(.invalidArgument, "give either participant or all, not both")
            default:
                throw WorkoutError(.invalidArgument, "participant must be a name and all a boolean")
            }
        }

        /// The arguments that select this target, to merge into a request's.
        public var arguments: [String: JSONValue] {
            switch self {
            case .main: [:]
            case .participant(let name): ["participant": .string(name)]
            case .all: ["all": .bool(true)]
            }
        }
    }

    /// The answer of a `workout.*` command: one snapshot per workout it acted on, and for
    /// `all`, what each participant that refused said.
    public struct GroupAnswer: Hashable, Sendable, Codable {
        /// The snapshots, in roster order.
        public var workouts: [WorkoutSnapshot]
        /// `NAME: reason` for each participant that refused the command.
        public var errors: [String]

        /// Creates an answer.
        public init(workouts: [WorkoutSnapshot] = [], errors: [String] = []) {
            self.workouts = workouts
            self.errors = errors
        }
    }

    /// One line of `participant.list`.
    public struct ParticipantSummary: Hashable, Sendable, Codable {
        /// The name.
        public var name: String
        /// The devices worn.
        public var devices: [String]
        /// The maximum heart rate the zones come from, if known.
        public var maximumHeartRate: Double?
        /// The state of their workout.
        public var workoutState: WorkoutSessionState
    }

    /// The participants with their devices and workout state.
    public func summaries() -> [ParticipantSummary] {
        let statuses = statuses()
        let now = clock.now()
        return roster.participants.map { participant in
            ParticipantSummary(
                name: participant.name, devices: participant.devices,
                maximumHeartRate: participant.profile.maximumHeartRate(on: now),
                workoutState: statuses[participant.name]?.state ?? .notStarted)
        }
    }

    /// The control commands: every `workout.*` command (see ``Target``), `participant.assign`
    /// (`device`, `participant`) and `participant.list`. Workout commands answer the single
    /// snapshot for one workout (as a lone controller does) and a ``GroupAnswer`` for `all`.
    public func controlHandlers() -> [String: @Sendable (JSONValue) async throws -> JSONValue] {
        var handlers: [String: @Sendable (JSONValue) async throws -> JSONValue] = [:]
        for command in WorkoutControlRequest.commands {
            handlers[command] = { arguments in
                let target = try Target(arguments: arguments)
                let request = try WorkoutControlRequest(command: command, arguments: arguments)
                let answer = try await self.handle(request, for: target)
                if target == .all { return try JSONValue.encoding(answer) }
                guard let snapshot = answer.workouts.first else { return try JSONValue.encoding(answer) }
                return try JSONValue.encoding(snapshot)
            }
        }
        handlers["participant.assign"] = { arguments in
            guard let device = arguments["device"]?.stringValue, let name = arguments["participant"]?.stringValue else {
                throw WorkoutError(.invalidArgument, "participant.assign needs device and participant")
            }
            try await self.assign(device: device, to: name)
            return try JSONValue.encoding(self.summaries())
        }
        handlers["participant.list"] = { _ in
            try await self.restore()
            return try JSONValue.encoding(self.summaries())
        }
        return handlers
    }

    // MARK: Sink role

    /// Quantity samples and heartbeat series, as a lone controller.
    public func accepts(_ record: HealthRecord) -> Bool { main.accepts(record) }

    /// Restores every controller, then offers every batch to each until the bus finishes.
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        do {
            try await restore()
            try await main.restore()
            for controller in state.withLock({ Array($0.controllers.values) }) { try await controller.restore() }
        } catch {
            logger.error("cannot restore the workouts from the store: \(error)")
            throw error
        }
        while let batch = await inbox.next() {
            noteDevices(of: batch)
            main.ingest(batch)
            for controller in state.withLock({ Array($0.controllers.values) }) { controller.ingest(batch) }
        }
    }

    /// Keeps the devices of `batch`'s heart rate in ``State/heardDevices``.
    private func noteDevices(of batch: [HealthRecord]) {
        var last: Device?
        for record in batch {
            guard case .quantity(let sample) = record, sample.type == .heartRate, let device = sample.device,
                !last.isIdentical(to: device)
            else { continue }
            last = device
            state.withLock { state in
                if let index = state.heardDevices.lastIndex(of: device) {
                    if index == state.heardDevices.count - 1 { return }
                    state.heardDevices.remove(at: index)
                }
                state.heardDevices.append(device)
                if state.heardDevices.count > Self.heardDevicesLimit { state.heardDevices.removeFirst() }
            }
        }
    }

    // MARK: Source role

    /// Runs every controller's publisher (those of participants added later too) until cancelled.
    public func run(context: SourceContext) async throws {
        // Unbounded, but each controller is yielded once and there are at most
        // ParticipantRoster.maximumParticipants of them.
        let (additions, continuation) = AsyncStream.makeStream(of: WorkoutController.self)
        let existing = state.withLock { state -> [WorkoutController] in
            state.additions = continuation
            return Array(state.controllers.values)
        }
        defer { state.withLock { $0.additions = nil } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.main.run(context: context) }
            for controller in existing { group.addTask { try await controller.run(context: context) } }
            // Cancelling the source finishes the stream, so this loop ends with the group.
            await withTaskCancellationHandler {
                for await controller in additions {
                    group.addTask { try await controller.run(context: context) }
                }
            } onCancel: {
                continuation.finish()
            }
            try await group.waitForAll()
        }
    }
}

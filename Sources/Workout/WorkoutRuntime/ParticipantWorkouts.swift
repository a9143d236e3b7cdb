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
/// gateway's own workout, the same as with no participants configured. For `all`, a command that
/// acts on a workout in progress (``WorkoutControlRequest/actsOnAWorkoutInProgress``: end, pause,
/// resume, lap, marker, activity) acts on every workout in progress and lists the participants
/// without one (``GroupAnswer/notInProgress``); it fails only when no workout at all is in
/// progress. At most ``allWidth`` participants' commands run at once, answered in roster order;
/// `all`'s end waits for the store to hold the workouts once every end has handed its over.
///
/// `participant.assign` moves a device to a participant (creating one with the default profile
/// if the name is new) and
/// `participant.list` lists them. An assignment is committed to the store before it is answered,
/// and a restart replays the stored assignments over the configured ones. A participant's
/// workout collects the readings attributed to the participant (by the store) from any
/// device, and the unattributed ones of the devices they wear when it starts
/// (``Workouts/LiveWorkoutBuilder``'s rule).
///
/// **Signing in** (``ClassSignIn``): the heart-rate straps nobody wears are followed as new
/// straps (``newStraps()``, `participant.straps`, the board's new-strap tiles). An assignment
/// made while the class runs (a participant's workout is in progress) starts the participant's
/// workout, with the class's activity, from the strap's first beat in the class (the committed
/// samples since then are collected), and unless kept (`keep`) lasts until the class ends: when
/// the last participant's workout ends, those assignments are deleted from the store and the
/// roster is the configured one with the remaining stored assignments again, as after a restart.
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
        /// The configured roster, before any run-time assignment: what a class's end goes back to
        /// (with the assignments that stay).
        let configured: ParticipantRoster
        /// The new straps, the running class and its sign-ins.
        var signIn = ClassSignIn()
    }

    /// How many distinct devices ``State/heardDevices`` keeps (the oldest goes first).
    static let heardDevicesLimit = 128

    /// How many participants' commands an `all` command runs at once by default. Each end reads
    /// the workout's committed samples back from the store and builds the workout; 30 at once
    /// left the gateway's RSS at 73 MiB after a class's end, against 39.5 MiB one at a time
    /// (Benchmarks/RESULTS.md). The waits for the store to hold the workouts are not bounded by
    /// it (they come after). Measured for `demo --class 30` ended after 60 s (debug build, a
    /// shared two-core machine at load 8 to 17; until every workout was stored, RSS growth):
    /// width 1: 11.4 and 21.1 s, +5 and +6 MiB; 2: 9.5 and 12.1 s, +4 and +6; 4: 11.3 and
    /// 12.1 s, +6 and +6; 8: 9.8 s, +9; 30: 19.1 s, +16. Four is as fast as any, with the memory
    /// of one at a time.
    public static let defaultAllWidth = 4

    /// How many participants' commands an `all` command runs at once.
    public let allWidth: Int
    /// How long an end waits for the store to hold the workouts it ended (`storeWaitSeconds`):
    /// `--all`'s ends wait together, until one deadline.
    public let storeWait: Duration

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

    /// A group for `roster`; nothing is read from `store` until ``restore()``. An `all` command
    /// runs at most `allWidth` participants' commands at once (at least one).
    public init(
        roster: ParticipantRoster, store: any WorkoutStateStore & ParticipantAssignmentStore, clock: any GatewayClock,
        ids: SampleIDGenerator, logger: Logger, clockBase: (@Sendable () -> ClockBase)? = nil,
        allWidth: Int = ParticipantWorkouts.defaultAllWidth, storeWait: Duration = WorkoutController.defaultStoreWait
    ) {
        self.allWidth = max(1, allWidth)
        self.storeWait = storeWait
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
            othersDevices: { worn.roster.withLock { $0.participants.flatMap(\.devices) } }, storeWait: storeWait)
        var initial = State(roster: roster, configured: roster)
        for participant in roster.participants {
            initial.controllers[participant.name] = WorkoutController(
                profile: participant.profile, store: store, clock: clock, ids: ids,
                logger: logger.child(participant.name), participant: participant.name, clockBase: clockBase, storeWait: storeWait)
        }
        state = Mutex(initial)
    }

    /// The participants and their devices now.
    public var roster: ParticipantRoster { state.withLock { $0.roster } }

    /// The configured roster, before any run-time assignment: whose devices the store attributes
    /// readings by (`HealthStore.attributeReadings(by:)`, with the assignments' intervals it holds).
    public var configuredRoster: ParticipantRoster { state.withLock { $0.configured } }

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
        state.withLock { $0.signIn.restore(assignments) }
        let journaledNames = try store.journaledWorkouts().compactMap(\.definition.participant)
        var roster = state.withLock { $0.roster }
        apply(assignments, to: &roster)
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

    /// Applies the stored `assignments` to `roster` in order; one that cannot be applied is
    /// logged and passed over (the store keeps it).
    private func apply(_ assignments: [ParticipantAssignment], to roster: inout ParticipantRoster) {
        for assignment in assignments {
            do {
                try roster.apply(assignment)
            } catch {
                logger.error("stored assignment of \(assignment.device) to \(assignment.participant) is not applied: \(error)")
            }
        }
    }

    private func addController(_ participant: Participant, to state: inout State) {
        let controller = WorkoutController(
            profile: participant.profile, store: store, clock: clock, ids: ids, logger: logger.child(participant.name),
            participant: participant.name, clockBase: clockBase, storeWait: storeWait)
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
    /// to the store before it returns. From then on the device's readings are the participant's
    /// (the store attributes each reading it commits by the stored intervals): a workout of
    /// theirs in progress takes them, the previous wearer's no longer does.
    ///
    /// While a class runs it is a sign-in (``ClassSignIn``): a participant with no workout in
    /// progress gets one, with the class's activity, from the strap's first beat in the class;
    /// and unless `keep`, the class's end frees the strap.
    /// - Throws: ``WorkoutError/Code/invalidArgument`` for a bad name or device,
    ///   ``WorkoutError/Code/persistence`` when the store cannot commit it (nothing changes).
    @discardableResult
    public func assign(device: String, to participant: String, keep: Bool = false) async throws(WorkoutError) -> ParticipantRoster {
        try await refreshClass()
        let (roster, name, signIn) = try await executor.run { () throws(WorkoutError) -> (ParticipantRoster, String, ClassSignIn.SignIn) in
            try self.restoreOnQueue()
            var trial = self.state.withLock { $0.roster }
            // A name that differs from a participant's only in case is that participant, not a new one.
            let name = Self.participantName(participant.trimmed(), among: trial.participants.map(\.name))
            // The strap's other names, from the devices heard that this identity names.
            let identity = DeviceIdentity(device)
            let aliases = self.state.withLock { $0.heardDevices }
                .filter { $0.identities.contains(identity) }
                .reduce(into: Set<DeviceIdentity>()) { $0.formUnion($1.identities) }
            // Decided on a copy: the sign-in state changes only once the store has the assignment.
            var signInTrial = self.state.withLock { $0.signIn }
            let signIn = signInTrial.signIn(device: device, participant: name, keep: keep)
            let assignment = ParticipantAssignment(device: device, participant: name, untilClassEnd: signIn.untilClassEnd)
            try trial.apply(assignment, aliases: aliases)
            try self.store.assign(assignment, at: self.clock.now())
            self.state.withLock { state in
                state.roster = trial
                // Heard meanwhile only: the decision above is the one committed.
                _ = state.signIn.signIn(device: device, participant: name, keep: keep)
                self.worn.roster.withLock { $0 = trial }
                for participant in trial.participants where state.controllers[participant.name] == nil {
                    self.addController(participant, to: &state)
                }
            }
            self.logger.info(
                "device \(device) is worn by \(name)" + (signIn.untilClassEnd ? " until the class ends" : "")
                    + (signIn.workoutStart.map { ", signed in from its first beat at \(RFC3339.string(from: $0))" } ?? ""))
            return (trial, name, signIn)
        }
        // A sign-in during the class: the participant's workout from the strap's first beat.
        if let activity = signIn.activity, let controller = controller(for: name), controller.activeSession() == nil,
            let wearer = roster.participant(named: name)
        {
            do {
                try await controller.start(activity: activity, devices: wearer.devices, startDate: signIn.workoutStart)
            } catch {
                logger.error("\(name) is signed in, but their workout did not start: \(error)")
                throw error
            }
        }
        return roster
    }

    /// The heart-rate straps nobody wears heard lately (``ClassSignIn/newStraps(at:)``).
    public func newStraps() -> [ClassSignIn.NewStrap] {
        let now = clock.uptime()
        return state.withLock { $0.signIn.newStraps(at: now) }
    }

    /// The devices signed in until the running class ends, with their participants.
    public var signedInUntilClassEnd: [String: String] { state.withLock { $0.signIn.untilClassEnd } }

    /// Follows the class (``ClassSignIn``): it began when a participant's workout is in progress
    /// and none was; it ended when none is any more, and then the straps signed in until its end
    /// are freed (deleted from the store; the roster is the configured one with the remaining
    /// stored assignments). Called after every workout command and once restored.
    /// - Throws: ``WorkoutError/Code/persistence`` when the store cannot be read or written.
    public func refreshClass() async throws(WorkoutError) {
        try await restore()
        let controllers = state.withLock { Array($0.controllers.values) }
        for controller in controllers { try await controller.restore() }
        let sessions = controllers.compactMap { $0.activeSession() }
        let (classStart, pending) = state.withLock { ($0.signIn.classStart, !$0.signIn.untilClassEnd.isEmpty) }
        if let first = sessions.min(by: { ($0.startDate ?? .distantFuture) < ($1.startDate ?? .distantFuture) }) {
            guard classStart == nil else { return }
            let start = first.startDate ?? clock.now()
            state.withLock { $0.signIn.classBegan(at: start, activity: first.activityType) }
            logger.info("the class began at \(RFC3339.string(from: start)) (\(first.activityType.rawValue))")
            return
        }
        guard classStart != nil || pending else { return }
        try await executor.run { () throws(WorkoutError) in
            let freed = self.state.withLock { $0.signIn.untilClassEnd.keys.sorted() }
            try self.store.unassign(freed, at: self.clock.now())
            self.state.withLock { _ = $0.signIn.classEnded() }
            try self.reloadAssignmentsOnQueue()
            self.logger.info(
                "the class ended" + (freed.isEmpty ? "" : ": \(String(count: freed.count, "strap")) signed in for it freed (\(freed.joined(separator: ", ")))"))
        }
    }

    /// Reads the assignments from the store again, as after a restart: the roster is the
    /// configured one with the stored assignments, the straps signed in until the class's end
    /// are those stored so. What `participant
    /// erase` asks of a running gateway (`participant.reload`), once the person's assignments
    /// are deleted from the store.
    /// - Throws: ``WorkoutError/Code/persistence`` when the store cannot be read (nothing changes).
    public func reloadAssignments() async throws(WorkoutError) {
        try await restore()
        try await executor.run { () throws(WorkoutError) in try self.reloadAssignmentsOnQueue() }
    }

    private func reloadAssignmentsOnQueue() throws(WorkoutError) {
        let assignments = try store.participantAssignments()
        var roster = state.withLock { $0.configured }
        apply(assignments, to: &roster)
        let stored = Set(assignments.filter(\.untilClassEnd).map(\.device))
        state.withLock { state in
            for device in state.signIn.untilClassEnd.keys where !stored.contains(device) { state.signIn.forgetSignIn(of: device) }
            state.signIn.restore(assignments)
            state.roster = roster
            self.worn.roster.withLock { $0 = roster }
        }
    }

    /// Runs one workout command for `target`.
    /// - Returns: one snapshot for the gateway's own workout or one participant's; for
    ///   ``Target/all``, the snapshot of every participant it acted on, in roster order, the
    ///   participants without a workout in progress (for a command that acts on one) and the
    ///   errors of those that refused.
    /// - Throws: ``WorkoutError`` as the one workout's controller does; for ``Target/all``,
    ///   ``WorkoutError/Code/invalidArgument`` when there are no participants and
    ///   ``WorkoutError/Code/noSession`` when the command acts on a workout in progress and no
    ///   participant has one.
    public func handle(_ request: WorkoutControlRequest, for target: Target) async throws(WorkoutError) -> GroupAnswer {
        let answer = try await handleWorkout(request, for: target)
        switch request {
        case .start, .end:
            do {
                try await refreshClass()
            } catch {
                logger.error("the class's sign-ins could not be brought up to date: \(error)")
            }
        default: break
        }
        return answer
    }

    private func handleWorkout(_ request: WorkoutControlRequest, for target: Target) async throws(WorkoutError) -> GroupAnswer {
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
            let participants = roster.participants
            guard !participants.isEmpty else {
                throw WorkoutError(.invalidArgument, "all: no participants are configured or assigned")
            }
            let targets = participants.compactMap { participant in controller(for: participant.name).map { (participant, $0) } }
            // Each controller has a queue of its own, and an end waits until the store holds its
            // workout (the sink's next commit): one after another, ending a class of 30 took 15 to
            // 60 s; all at once, 30 ends reading their samples back together raised the RSS. So
            // the ends' work runs a few at a time, and then the waits for the store, all at once
            // until one deadline (one after another, each its own wait, a slow store made the
            // class's end answer after the CLI had given up).
            let outcomes = await Self.inOrder(targets, width: allWidth) { target throws(WorkoutError) -> AllOutcome in
                guard case .end = request else { return .answered(try await self.run(request, target.0, target.1)) }
                try await target.1.restore()
                return .ended(try await target.1.endHandingOver())
            }
            let deadline = clock.uptime() + storeWait
            let results = await Self.inOrder(Array(zip(targets.map(\.1), outcomes)), width: max(targets.count, 1)) {
                item throws(WorkoutError) -> WorkoutSnapshot in
                switch item.1 {
                case .success(.answered(let snapshot)): return snapshot
                case .success(.ended(let ended)): return try await item.0.waitUntilStored(ended, by: deadline)
                case .failure(let error): throw error
                }
            }
            var answer = GroupAnswer()
            for ((participant, _), result) in zip(targets, results) {
                switch result {
                case .success(let snapshot): answer.workouts.append(snapshot)
                case .failure(let error) where error.code == .noSession && request.actsOnAWorkoutInProgress:
                    answer.notInProgress.append(participant.name)
                case .failure(let error): answer.errors.append("\(participant.name): \(error.message)")
                }
            }
            if request.actsOnAWorkoutInProgress, answer.workouts.isEmpty, answer.errors.isEmpty {
                throw WorkoutError(
                    .noSession,
                    "no participant's workout is in progress (participants: \(participants.map(\.name).joined(separator: ", ")))")
            }
            return answer
        }
    }

    /// What a command for `--all` did for one participant before the end's wait for the store:
    /// answered, or ended (the wait follows, for every participant together).
    private enum AllOutcome: Sendable {
        case answered(WorkoutSnapshot)
        case ended(WorkoutController.Ended)
    }

    /// `operation` on every element of `elements`, at most `width` at once, the results in the
    /// elements' order. Cancellation reaches every operation running.
    static func inOrder<Element: Sendable, Success: Sendable>(
        _ elements: [Element], width: Int,
        _ operation: @escaping @Sendable (Element) async throws(WorkoutError) -> Success
    ) async -> [Result<Success, WorkoutError>] {
        await withTaskGroup(of: (Int, Result<Success, WorkoutError>).self) { group in
            var results = [Result<Success, WorkoutError>?](repeating: nil, count: elements.count)
            for (index, element) in elements.enumerated() {
                // A slot frees when one finishes: at most `width` run at any moment.
                if index >= width, let finished = await group.next() { results[finished.0] = finished.1 }
                group.addTask {
                    do throws(WorkoutError) {
                        return (index, .success(try await operation(element)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            for await (done, result) in group { results[done] = result }
            // Every task answers once, so every slot is filled.
            return results.compactMap { $0 }
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
    /// `all`, who had no workout in progress and what each participant that refused said.
    public struct GroupAnswer: Hashable, Sendable, Codable {
        /// The snapshots, in roster order.
        public var workouts: [WorkoutSnapshot]
        /// The participants, in roster order, without a workout in progress, for a command that
        /// acts on one (``WorkoutControlRequest/actsOnAWorkoutInProgress``): not acted on, and
        /// not a failure.
        public var notInProgress: [String]
        /// `NAME: reason` for each participant that refused the command.
        public var errors: [String]

        /// Creates an answer.
        public init(workouts: [WorkoutSnapshot] = [], notInProgress: [String] = [], errors: [String] = []) {
            self.workouts = workouts
            self.notInProgress = notInProgress
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
        /// The devices signed in for the running class only: its end frees them.
        public var untilClassEnd: [String]?
    }

    /// The participants with their devices and workout state.
    public func summaries() -> [ParticipantSummary] {
        // The state only: the board's figures give it without reading any workout's samples.
        let statuses = boardStatuses()
        let now = clock.now()
        let signedIn = signedInUntilClassEnd
        return roster.participants.map { participant in
            let temporary = participant.devices.filter { signedIn[$0] == participant.name }
            return ParticipantSummary(
                name: participant.name, devices: participant.devices,
                maximumHeartRate: participant.profile.maximumHeartRate(on: now),
                workoutState: statuses[participant.name]?.state ?? .notStarted,
                untilClassEnd: temporary.isEmpty ? nil : temporary)
        }
    }

    /// The control commands: every `workout.*` command (see ``Target``), `participant.assign`
    /// (`device`, `participant`, optional `keep`), `participant.list`, `participant.straps`
    /// (the new straps, ``newStraps()``) and `participant.reload` (``reloadAssignments()``). Workout commands answer the single
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
            let keep: Bool
            switch arguments["keep"] {
            case nil, .null?: keep = false
            case .bool(let value)?: keep = value
            default: throw WorkoutError(.invalidArgument, "participant.assign: keep must be a boolean")
            }
            try await self.assign(device: device, to: name, keep: keep)
            return try JSONValue.encoding(self.summaries())
        }
        handlers["participant.reload"] = { _ in
            try await self.reloadAssignments()
            return try JSONValue.encoding(self.summaries())
        }
        handlers["participant.straps"] = { _ in
            try await self.restore()
            return try JSONValue.encoding(self.newStraps())
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
            // A class left running, or one that ended before its sign-ins were freed (a crash).
            try await refreshClass()
        } catch {
            logger.error("cannot restore the workouts from the store: \(error)")
            throw error
        }
        while let batch = await inbox.next() { ingest(batch) }
    }

    /// Offers `batch` to every workout and notes its heart rate's straps (new straps for the
    /// sign-in); what the sink role does with each batch.
    public func ingest(_ batch: [HealthRecord]) {
        noteDevices(of: batch)
        main.ingest(batch)
        // Whose each reading is, previewed by the store's latest rules: the records reach the
        // workouts beside the store's sink, before they are committed (where it is decided).
        var preview = batch
        if var attribution = store.currentAttribution {
            var counts = AttributionCounts()
            preview = attribution.attribute(batch, counts: &counts)
        }
        for controller in state.withLock({ Array($0.controllers.values) }) { controller.ingest(preview) }
    }

    /// Keeps the devices of `batch`'s heart rate in ``State/heardDevices``, and each reading in
    /// the sign-in state (a strap nobody wears is a new strap).
    private func noteDevices(of batch: [HealthRecord]) {
        var last: Device?
        let now = clock.uptime()
        var roster: ParticipantRoster?
        for record in batch {
            guard case .quantity(let sample) = record, sample.type == .heartRate, let device = sample.device else { continue }
            // Read once per batch that has heart rate: a worn strap is matched against the roster.
            let current = roster ?? self.roster
            roster = current
            let worn = current.owner(of: device) != nil
            state.withLock { state in
                state.signIn.hear(
                    device, heartRate: sample.quantity.value, at: sample.endDate, radio: StrapRadio(of: sample), worn: worn,
                    arrivedAt: now)
                guard !last.isIdentical(to: device) else { return }
                if let index = state.heardDevices.lastIndex(of: device) {
                    if index == state.heardDevices.count - 1 { return }
                    state.heardDevices.remove(at: index)
                }
                state.heardDevices.append(device)
                if state.heardDevices.count > Self.heardDevicesLimit { state.heardDevices.removeFirst() }
            }
            last = device
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

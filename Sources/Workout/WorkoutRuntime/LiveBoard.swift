public import Workouts
public import WorkoutPresentation
import FoundationEssentials
public import HealthModel
public import GatewayRuntime
public import SampleBus
import Synchronization

/// The live board's feed in the gateway: a ``SampleSink`` that keeps every device's latest heart
/// rate in a ``LiveBoardModel`` and makes ``BoardSnapshot``s with the participants' workouts.
///
/// A snapshot's cost does not grow with the workouts' length: the workouts' figures (zone
/// seconds, energy) come from running aggregates (``WorkoutController/boardStatus()``), not from
/// an analysis of every sample. Every ingested batch calls the change handler
/// (``setChangeHandler(_:)``), which the board's server coalesces into an event.
///
/// Isolation: the model is in a `Mutex`, held only to ingest a batch or to copy it; snapshots
/// are made outside the lock. Safe from any thread (the web server's included).
public final class LiveBoard: SampleSink, BoardFeed {
    private let model = Mutex(LiveBoardModel())
    private let changeHandler = Mutex<ChangeHandler?>(nil)
    private let workouts: ParticipantWorkouts
    private let clock: any GatewayClock

    /// A board of `workouts`' participants, timed by `clock`.
    public init(workouts: ParticipantWorkouts, clock: any GatewayClock) {
        self.workouts = workouts
        self.clock = clock
    }

    /// Heart-rate samples only.
    public func accepts(_ record: HealthRecord) -> Bool {
        if case .quantity(let sample) = record { return sample.type == .heartRate }
        return false
    }

    /// Keeps every batch until the bus finishes.
    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        while let batch = await inbox.next() { ingest(batch) }
    }

    /// Takes a batch, as arrived now, and tells the change handler.
    public func ingest(_ records: [HealthRecord]) {
        let now = clock.uptime()
        model.withLock { $0.ingest(records, arrivedAt: now) }
        changeHandler.withLock { $0 }?.call()
    }

    /// The handler in a struct. A closure kept directly in the `Mutex` (a generic value) is
    /// reabstracted through `withLock`'s `inout` parameter, read out and written back, so every
    /// call wrapped it in two more thunks: 5 minutes into the `class` benchmark each call ran
    /// through more than 120 nested thunks (perf), 36 % of the gateway's CPU, and its CPU and
    /// RSS grew with the class's length. A struct's stored closure keeps its own abstraction.
    private struct ChangeHandler {
        let call: @Sendable () -> Void
    }

    /// Replaces the handler called after every ingested batch (on the ingesting task; it must
    /// return at once); nil removes it.
    public func setChangeHandler(_ handler: (@Sendable () -> Void)?) {
        changeHandler.withLock { $0 = handler.map(ChangeHandler.init(call:)) }
    }

    /// The participants and their profiles now.
    public var roster: ParticipantRoster { workouts.roster }

    /// The board now: the participants' tiles, then the new straps the sign-in state offers
    /// (``ParticipantWorkouts/newStraps()``).
    public func snapshot() -> BoardSnapshot {
        let model = model.withLock { $0 }
        return model.snapshot(
            at: clock.now(), uptime: clock.uptime(), roster: workouts.roster, workouts: workouts.boardStatuses(),
            newStraps: Set(workouts.newStraps().map(\.identity)))
    }

    /// Assigns through ``ParticipantWorkouts/assign(device:to:keep:)``, the path of
    /// `participant assign`, then tells the change handler (the tiles moved).
    public func signIn(strap: String, participant: String, keep: Bool) async throws(WorkoutError) -> Participant {
        let roster = try await workouts.assign(device: strap, to: participant, keep: keep)
        changeHandler.withLock { $0 }?.call()
        let name = ParticipantWorkouts.participantName(participant.trimmed(), among: roster.participants.map(\.name))
        return roster.participant(named: name) ?? Participant(name: name, devices: [strap])
    }
}

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
/// The workouts' figures (time in zone, energy) are computed over every sample of each workout,
/// so they are refreshed at most once per ``workoutRefreshSeconds``, while heart rates and sensor
/// states are fresh in every snapshot.
///
/// Isolation: the model is in a `Mutex`, held only to ingest a batch or to copy it; snapshots
/// are made outside the lock. Safe from any thread (the web server's included).
public final class LiveBoard: SampleSink, BoardFeed {
    /// How often the workouts' figures are recomputed for the board.
    public static let workoutRefreshSeconds = 1.0

    private let model = Mutex(LiveBoardModel())
    private let workoutFigures = Mutex<(uptime: Duration, statuses: [String: WorkoutSnapshot])?>(nil)
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

    /// Takes a batch, as arrived now.
    public func ingest(_ records: [HealthRecord]) {
        let now = clock.uptime()
        model.withLock { $0.ingest(records, arrivedAt: now) }
    }

    /// The participants and their profiles now.
    public var roster: ParticipantRoster { workouts.roster }

    /// The board now.
    public func snapshot() -> BoardSnapshot {
        let model = model.withLock { $0 }
        let uptime = clock.uptime()
        let cached = workoutFigures.withLock { $0 }
        let statuses: [String: WorkoutSnapshot]
        if let cached, (uptime - cached.uptime).seconds < Self.workoutRefreshSeconds {
            statuses = cached.statuses
        } else {
            statuses = workouts.statuses()
            workoutFigures.withLock { $0 = (uptime, statuses) }
        }
        return model.snapshot(at: clock.now(), uptime: uptime, roster: workouts.roster, workouts: statuses)
    }
}

import Foundation
public import HealthModel
public import SampleBus
import Synchronization

/// The live board's feed in the gateway: a ``SampleSink`` that keeps every device's latest heart
/// rate in a ``LiveBoardModel`` and makes ``BoardSnapshot``s with the participants' workouts.
///
/// Isolation: the model is in a `Mutex`, held only to ingest a batch or to copy it; snapshots
/// are made outside the lock. Safe from any thread (the web server's included).
public final class LiveBoard: SampleSink {
    private let model = Mutex(LiveBoardModel())
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
        let now = clock.now()
        model.withLock { $0.ingest(records, arrivedAt: now) }
    }

    /// The board now.
    public func snapshot() -> BoardSnapshot {
        let model = model.withLock { $0 }
        return model.snapshot(at: clock.now(), roster: workouts.roster, workouts: workouts.statuses())
    }
}

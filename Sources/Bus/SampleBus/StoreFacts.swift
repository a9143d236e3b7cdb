public import FoundationEssentials
public import GatewayRuntime
public import HealthStore
import Synchronization

/// Reads the store's ``HealthStore/StoreOverview`` (what `status`, `GET /metrics` and the board say of
/// the store, so that none of them ever waits on its disk) every ``interval`` on a reader of the store and keeps the last ones, with
/// whether the store answers: a read that has not ended, or a write of the writer's that has not
/// (``HealthStore/writerActivity``), for longer than ``stuckAfter`` means the store is stuck, and
/// since when. Readable from any thread at once (``snapshot``).
public final class StoreFactsWatch: Sendable {
    /// What the readers of the facts get.
    public struct Snapshot: Sendable {
        /// The last overview read; nil before the first read ended.
        public var overview: StoreOverview?
        /// When the store stopped answering (a read or a write of it began then and has not
        /// ended); nil while it answers.
        public var stuckSince: Date?
        /// Why the last read failed, if it did.
        public var error: String?
    }

    /// How often the facts are read.
    public static let interval = Duration.seconds(1)
    /// How long a read or write may take before the store counts as stuck.
    public static let stuckAfter = Duration.seconds(2)

    private struct State {
        var overview: StoreOverview?
        /// When the read in progress began (the monotonic clock), nil between reads.
        var readingSince: Duration?
        var error: String?
    }

    private let store: HealthStore
    private let clock: any GatewayClock
    private let state = Mutex(State())

    public init(store: HealthStore, clock: any GatewayClock) {
        self.store = store
        self.clock = clock
    }

    /// Reads the facts every ``interval`` until cancelled; a failed read is kept as ``Snapshot/error``
    /// and read again at the next interval.
    public func run() async throws {
        while true {
            try await refresh()
            try await clock.sleep(for: Self.interval)
        }
    }

    /// Reads the facts once and publishes them.
    public func refresh() async throws {
        let began = clock.uptime()
        state.withLock { $0.readingSince = began }
        do {
            let overview = try await store.overview()
            state.withLock { $0 = State(overview: overview, readingSince: nil, error: nil) }
        } catch {
            let text = "\(error)"
            state.withLock {
                $0.readingSince = nil
                $0.error = text
            }
        }
        try Task.checkCancellation()
    }

    /// The last facts and whether the store answers, without waiting for anything.
    public var snapshot: Snapshot {
        let now = clock.uptime()
        let (overview, readingSince, error) = state.withLock { ($0.overview, $0.readingSince, $0.error) }
        let writingSince = store.writerActivity?.busySince
        let since = [readingSince, writingSince].compactMap { $0 }.min()
        let stuckSince = since.flatMap { since in
            now - since >= Self.stuckAfter ? clock.now().addingTimeInterval(-(now - since).seconds) : nil
        }
        return Snapshot(overview: overview, stuckSince: stuckSince, error: error)
    }
}

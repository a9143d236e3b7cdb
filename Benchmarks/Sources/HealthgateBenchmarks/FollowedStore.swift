import Foundation
import GatewayRuntime
import HealthModel
import HealthStore
import SampleBus

/// What the HTTP and MQTT benchmarks share: a store of heart-rate samples written before the
/// timed regions, and the sink under test run over it as a store follower until its committed
/// cursor reaches the latest anchor.
struct FollowedStore {
    let store: HealthStore
    /// The samples in the store, in the order written.
    let records: [HealthRecord]
    /// The store's latest anchor once written: where a follower's cursor ends.
    let latest: Int64

    /// A store in `environment` holding `count` heart-rate samples, written in transactions of
    /// 1000.
    init(count: Int, environment: BenchmarkEnvironment) async throws {
        store = try await HealthStore.open(path: environment.path("followed.sqlite"))
        records = try BenchmarkSamples.heartRate(count: count, ids: SampleIDGenerator())
        for first in stride(from: 0, to: records.count, by: 1000) {
            try await store.write(Array(records[first..<min(first + 1000, records.count)]))
        }
        latest = try await store.latestAnchor()
    }

    /// Runs `follower` (a sink of `kind`) as follower `name` until its committed cursor reaches
    /// ``latest`` (polled every millisecond), then stops it. A new name starts at anchor 0.
    /// - Returns: the seconds from its start until its cursor got there, and its status then.
    /// - Throws: ``FollowerStopped`` when it returned before its cursor got there; what it threw.
    func follow(
        _ follower: some StoreFollower, kind: String, name: String, environment: BenchmarkEnvironment
    ) async throws -> (seconds: Double, status: PluginStatus?) {
        let board = StatusBoard()
        let status = board.register(name: name, kind: kind, role: .sink)
        let shutdown = ShutdownSignal()
        let context = FollowerContext(
            logger: environment.logger, clock: environment.clock, status: status, stopRequest: StopRequest(shutdown),
            storeSettled: { true })
        let start = ContinuousClock.now
        let seconds = try await withThrowingTaskGroup(of: Double?.self) { [store, latest] group in
            group.addTask {
                try await follower.run(context: context)
                return nil
            }
            group.addTask {
                while try await store.follower(name)?.anchor ?? 0 < latest {
                    try await Task.sleep(for: .milliseconds(1))
                }
                let seconds = (ContinuousClock.now - start).benchmarkSeconds
                shutdown.requestStop()
                return seconds
            }
            var seconds: Double?
            for try await result in group where result != nil { seconds = result }
            guard let seconds else { throw FollowerStopped(name: name, latest: latest) }
            return seconds
        }
        return (seconds, status.current)
    }
}

/// A follower returned before its committed cursor reached the store's latest anchor.
struct FollowerStopped: Error, CustomStringConvertible {
    var name: String
    var latest: Int64
    var description: String { "\(name): the sink stopped before its cursor reached \(latest)" }
}

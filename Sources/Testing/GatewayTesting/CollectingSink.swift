public import Foundation
public import HealthStore
public import HealthModel
public import GatewayRuntime
public import SampleBus
import AsyncPrimitives
import Synchronization

/// A sink that keeps every record it receives, for assertions.
///
/// It can be told to fail (`failNext`) to exercise supervision, and to hold each batch until
/// released (`holdBatches`) to exercise back-pressure and graceful shutdown.
public final class CollectingSink: SampleSink {
    private struct State {
        var records: [HealthRecord] = []
        var failures = 0
        var runs = 0
    }

    /// The gate a held batch waits at: closed while `held` and not `opened`.
    private struct Gate {
        var held = false
        var opened = false
    }

    private let state = Mutex(State())
    private let gate = AsyncCondition(Gate())
    private let batchSize: Int
    private let holdBatches: Bool
    private let filter: @Sendable (HealthRecord) -> Bool

    public init(batchSize: Int = 1000, holdBatches: Bool = false, accepts: @escaping @Sendable (HealthRecord) -> Bool = { _ in true }) {
        self.batchSize = batchSize
        self.holdBatches = holdBatches
        self.filter = accepts
    }

    /// Records received and committed so far.
    public var records: [HealthRecord] { state.withLock { $0.records } }
    /// How many times `run` started.
    public var runs: Int { state.withLock { $0.runs } }
    /// Whether a batch is being held (``holdBatches`` mode).
    public var isHoldingBatch: Bool { gate.value.held }

    /// Makes the next `count` batches throw instead of committing.
    public func failNext(_ count: Int) {
        state.withLock { $0.failures = count }
    }

    /// Lets a held batch commit.
    public func release() {
        gate.update { if $0.held { $0.opened = true } }
    }

    public func accepts(_ record: HealthRecord) -> Bool { filter(record) }

    public func run(inbox: SinkInbox, context: SinkContext) async throws {
        state.withLock { $0.runs += 1 }
        while let batch = await inbox.next(maxCount: batchSize) {
            let fail = state.withLock { state -> Bool in
                guard state.failures > 0 else { return false }
                state.failures -= 1
                return true
            }
            if fail { throw InjectedFailure() }
            if holdBatches {
                // A held batch must not outlive a forced shutdown: cancellation ends the wait and
                // the batch is abandoned uncommitted, as a real sink's would be.
                gate.set(Gate(held: true))
                defer { gate.set(Gate()) }
                try await gate.wait { $0.opened }
            }
            state.withLock { $0.records.append(contentsOf: batch) }
            context.status.recordsHandled(batch.count, lastDate: batch.compactMap(\.endDate).max())
        }
    }

    /// The error a failing batch throws.
    public struct InjectedFailure: Error, CustomStringConvertible {
        public var description: String { "injected failure" }
    }
}

/// A log sink that keeps entries in memory.
public final class RecordingLogSink: LogSink {
    private let storage = Mutex<[LogEntry]>([])
    public init() {}
    public func write(_ entry: LogEntry) { storage.withLock { $0.append(entry) } }
    public var entries: [LogEntry] { storage.withLock { $0 } }
    /// Whether any entry's message contains `text`.
    public func contains(_ text: String) -> Bool { entries.contains { $0.message.contains(text) } }
}

/// Helpers to build test environments.
public enum TestEnvironment {
    /// A plugin environment in a temporary directory with a recording logger, and `store`
    /// (nil for plugins that need none).
    public static func make(
        name: String = "test", clock: any GatewayClock = ManualClock(),
        directory: URL, variables: [String: String] = [:], logSink: RecordingLogSink = RecordingLogSink(),
        store: HealthStore? = nil
    ) -> PluginEnvironment {
        PluginEnvironment(
            name: name, logger: Logger(label: name, sink: logSink, level: .debug), clock: clock,
            ids: SampleIDGenerator(seed: 42), paths: GatewayPaths(
                dataDirectory: directory, stateDirectory: directory, runtimeDirectory: directory),
            variables: variables, store: store)
    }

    /// A fresh temporary directory, removed by the caller.
    public static func temporaryDirectory(_ prefix: String = "healthgate-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(SampleIDGenerator().next().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

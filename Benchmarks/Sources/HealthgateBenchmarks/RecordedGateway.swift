import Foundation
import HealthStore
import SQLiteStore
import SampleBus

/// The measured path the latency, ANT+ class and advertisements benchmarks share: the real
/// ``Gateway`` and bus running their sources into `SQLiteSink` (a 100 ms window, else its defaults) on a store file
/// of the benchmark's, every commit reported to a ``CommitRecorder``.
struct RecordedGateway {
    let gateway: Gateway
    let recorder: CommitRecorder
    /// The sink's batch window: what a delay budget is set against.
    let batchWindow: Duration
    private let shutdown: ShutdownSignal
    private let running: Task<Void, Never>

    /// Opens the store `file` in `environment`'s directory and starts the gateway with `sources`;
    /// the recorder records from the start when `recording`, else from its ``CommitRecorder/start()``.
    /// `window` is the sink's window (`batchWindowSeconds`): 0.1 s, against which the
    /// benchmarks' delay budgets are set (the window + 20 ms), not the default of 1 s, which
    /// would make them judge the wait instead of the commit path.
    init(
        sources: [ConfiguredSource], file: String, recording: Bool = false, window: Double? = 0.1,
        environment: BenchmarkEnvironment
    ) async throws {
        var plugin = environment.plugin("sqlite")
        plugin.store = try await HealthStore.open(path: environment.path(file))
        var configuration = SQLiteSink.Configuration()
        if let window { configuration.batchWindowSeconds = window }
        var sink = try SQLiteSink(settings: try configuration.validated(in: plugin), environment: plugin)
        recorder = CommitRecorder(recording: recording)
        recorder.attach(to: &sink)
        batchWindow = sink.batchWindow
        gateway = Gateway(
            sources: sources,
            sinks: [ConfiguredSink(name: "sqlite", kind: SQLiteSink.kind, queue: QueueConfiguration(), sink: sink)],
            clock: environment.clock, logger: environment.logger)
        let shutdown = ShutdownSignal()
        self.shutdown = shutdown
        running = Task { [gateway] in await gateway.run(shutdown: shutdown) }
    }

    /// Asks the gateway to stop gracefully without waiting: for a `defer` on the paths that throw.
    func requestStop() {
        _ = shutdown.requestStop()
    }

    /// Stops the gateway gracefully and returns once it has stopped.
    func stop() async {
        requestStop()
        await running.value
    }
}

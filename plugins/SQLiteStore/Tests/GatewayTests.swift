import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import GatewayRuntime
import SampleBus
import SQLiteStore
import XCTest

/// The sink under the real gateway: supervision, restart with backoff, redelivery, drain.
final class GatewayTests: StoreTestCase {
    /// Publishes its records once, then is done.
    struct ReplaySource: SampleSource {
        let records: [HealthRecord]
        func run(context: SourceContext) async throws {
            await context.publisher.publish(records)
        }
    }

    func testFullDiskRestartsTheSinkAndNothingIsLostOrDuplicated() async throws {
        let ids = makeIDs()
        func records(_ count: Int, from offset: Int) throws -> [HealthRecord] {
            // A type kept as samples of their own (heart rates fold into a few series, which
            // would not fill the file).
            try (0..<count).map { .quantity(try plainReading(ids, 70, at: Double(offset + $0))) }
        }
        let store = try await HealthStore.open(path: path)
        try await store.write(try records(50, from: 0))
        let pages = try XCTUnwrap(Int(try sqlite3("PRAGMA page_count")))

        let clock = ManualClock()
        let logs = RecordingLogSink()
        let sink = try SQLiteSink(
            settings: .init(batchSize: 5000, batchWindow: .zero),
            environment: TestEnvironment.make(clock: clock, directory: directory, store: store))
        try await store.setMaximumPageCount(pages)
        let gateway = Gateway(
            sources: [ConfiguredSource(name: "replay", kind: "replay", source: ReplaySource(records: try records(2000, from: 100)))],
            sinks: [ConfiguredSink(name: "store", kind: "sqlite", queue: QueueConfiguration(), sink: sink)],
            clock: clock, logger: Logger(label: "gateway", sink: logs, level: .debug),
            restartPolicy: RestartPolicy(initialDelay: .milliseconds(500)))
        let shutdown = ShutdownSignal()
        let running = Task { await gateway.run(shutdown: shutdown) }

        try await waitUntil("the sink fails and waits to restart") {
            gateway.statusBoard.status(of: "store")?.state == .restarting
        }
        let failed = try XCTUnwrap(gateway.statusBoard.status(of: "store"))
        XCTAssertTrue(failed.lastError?.contains("disk full") == true, failed.lastError ?? "no error")
        XCTAssertTrue(logs.contains("commit of 2000 records failed"))
        XCTAssertEqual(try count("samples"), 50)

        // Space is freed; the backoff passes; the restarted sink commits everything once.
        try await store.setMaximumPageCount(nil)
        try await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(500))
        try await waitUntil("the records are stored") { gateway.statusBoard.status(of: "store")?.records == 2000 }
        _ = shutdown.requestStop()
        await running.value
        let status = try XCTUnwrap(gateway.statusBoard.status(of: "store"))
        XCTAssertEqual(status.restarts, 1)
        XCTAssertEqual(status.state, .finished)
        XCTAssertNil(status.lastError)
        XCTAssertEqual(try count("samples"), 2050)
        XCTAssertEqual(try sqlite3("SELECT count(DISTINCT uuid) FROM samples"), "2050")
    }
}

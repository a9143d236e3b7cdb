import Dispatch
import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import GatewayRuntime
import SampleBus
import SQLiteStore
import XCTest

/// The gateway's writer, a reader in this process, and a second real process (Python's sqlite3
/// module) that reads and writes the same file at the same time, following the store's protocol
/// for a second writer (the anchor sequence read and advanced in its own transactions): both
/// continue one sequence of anchors.
final class TwoProcessTests: StoreTestCase {
    struct Report: Decodable {
        var journalMode: String
        var transactions: Int
        var observed: [Int]
        var errors: [String]
    }

    func testWriterReaderAndSecondProcessShareTheFile() async throws {
        let clock = ManualClock()
        let board = StatusBoard()
        let status = board.register(name: "sqlite", kind: "sqlite", role: .sink)
        let context = SinkContext(logger: Logger(label: "sqlite", sink: RecordingLogSink()), clock: clock, status: status)
        let writerStore = try await HealthStore.open(path: path)
        let sink = try SQLiteSink(
            settings: .init(batchSize: 100, batchWindow: .zero),
            environment: TestEnvironment.make(clock: clock, directory: directory, store: writerStore))
        let (inbox, feed, finish) = SinkInbox.standalone()
        let run = Task { try await sink.run(inbox: inbox, context: context) }

        let ids = makeIDs()
        let batches = try (0..<30).map { batch in
            try (0..<100).map { index in
                HealthRecord.quantity(try heartRate(ids, 70, at: Double(batch * 100 + index)))
            }
        }
        await feed(batches[0])
        try await waitUntil("the first batch") { status.current?.records == 100 }

        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/concurrent_writer.py").path
        let path = self.path
        let python = Task {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ProcessResult, any Error>) in
                // runProcess blocks until the child exits: keep it off the cooperative pool.
                DispatchQueue(label: "python").async {
                    continuation.resume(with: Result { try runProcess("/usr/bin/python3", [script, path, "3000"]) })
                }
            }
        }
        let store = try HealthStore(path: path, access: .readOnly)
        // Start writing once the other process has committed, so that both write at once.
        let (start, end) = (t0, at(86400))
        try await waitUntil("the second process's first commit") {
            try await store.statistics(of: .stepCount, from: start, to: end).sampleCount > 0
        }
        var readerCounts: [Int] = []
        for batch in batches.dropFirst() {
            await feed(batch)
            readerCounts.append(try await store.statistics(of: .heartRate, from: t0, to: at(86400)).sampleCount)
        }
        try await waitUntil("every batch committed") { status.current?.records == 3000 }
        let result = try await python.value
        finish()
        try await run.value

        XCTAssertEqual(result.status, 0, result.error)
        let report = try JSONDecoder().decode(Report.self, from: Data(result.output.utf8))
        print("second process: \(report.transactions) transactions, saw heartRate counts \(Set(report.observed).sorted())")
        XCTAssertEqual(report.errors, [], "the second process hit SQLite errors")
        XCTAssertEqual(report.journalMode, "wal")
        XCTAssertGreaterThanOrEqual(report.transactions, 20)
        // Both readers only ever see whole transactions of 100, in increasing order.
        for counts in [report.observed, readerCounts] {
            XCTAssertTrue(counts.allSatisfy { $0 % 100 == 0 }, "partial transaction seen: \(counts)")
            XCTAssertEqual(counts, counts.sorted())
        }
        XCTAssertEqual(report.observed.last, 3000)
        XCTAssertNil(status.current?.lastError)
        XCTAssertEqual(status.current?.errors, 0)

        // Everything both processes wrote is there, and readable through the store: the heart
        // rates in quantity series of a minute (3000 readings a second apart, 61 to a series).
        let heartRates = try await store.samples(of: .heartRate)
        XCTAssertEqual(heartRates.count, 3000)
        XCTAssertEqual(heartRates.map(\.startDate), (0..<3000).map { at(Double($0)) })
        let stepRows = try await store.samples(of: .stepCount)
        XCTAssertEqual(stepRows.count, report.transactions * 25)
        XCTAssertEqual(stepRows.first?.quantity, Quantity(1, .count))
        XCTAssertEqual(try count("samples"), report.transactions * 25)
        XCTAssertEqual(try count("quantity_series"), (3000 + 60) / 61)
        // One sequence: the latest anchor is the greatest held, and the change log hands out
        // every sample and series of both writers once, in anchor order.
        XCTAssertEqual(
            try sqlite3("SELECT latest = max((SELECT max(anchor) FROM samples), (SELECT max(anchor) FROM quantity_series)) FROM anchors"),
            "1")
        let changes = try await store.changes(since: 0)
        XCTAssertEqual(changes.added.count, (3000 + 60) / 61 + report.transactions * 25)
        XCTAssertEqual(changes.addedAnchors, changes.addedAnchors.sorted())
        XCTAssertEqual(Set(changes.added.map(\.id)).count, changes.added.count)
    }
}

import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import GatewayRuntime
import SampleBus
import SQLiteStore
import XCTest

final class SinkTests: StoreTestCase {
    var clock: ManualClock!
    var board: StatusBoard!
    var store: HealthStore!

    override func setUp() async throws {
        try await super.setUp()
        clock = ManualClock()
        board = StatusBoard()
        store = try await HealthStore.open(path: path)
    }

    func environment() -> PluginEnvironment {
        TestEnvironment.make(clock: clock, directory: directory, store: store)
    }

    func makeSink(_ json: String) throws -> SQLiteSink {
        let configuration = try ConfigurationJSONParser.parse(Data(json.utf8)).decodeStrictly(SQLiteSink.Configuration.self)
        let environment = environment()
        return try SQLiteSink(settings: try configuration.validated(in: environment), environment: environment)
    }

    /// A sink of configuration `json` running on a standalone inbox: `feed` and `finish` drive
    /// the inbox, `run` is the sink's run.
    func startSink(_ json: String) throws -> (
        feed: @Sendable ([HealthRecord]) async -> Void, finish: @Sendable () -> Void, context: SinkContext,
        run: Task<Void, any Error>
    ) {
        let sink = try makeSink(json)
        let (inbox, feed, finish) = SinkInbox.standalone()
        let context = context()
        return (feed, finish, context, Task { try await sink.run(inbox: inbox, context: context) })
    }

    func context() -> SinkContext {
        let logs = RecordingLogSink()
        return SinkContext(
            logger: Logger(label: "sqlite", sink: logs, level: .debug), clock: clock,
            status: board.register(name: "sqlite-\(board.snapshot().count)", kind: "sqlite", role: .sink))
    }

    /// Readings of a type kept as samples of their own, a row each (heart rates fold into a few
    /// quantity series, which would neither count by rows nor fill the file).
    func records(_ count: Int, ids: SampleIDGenerator = makeIDs(), from offset: Int = 0) throws -> [HealthRecord] {
        try (0..<count).map { index in
            var metadata = Metadata()
            metadata.heartRateSensorLocation = .chest
            return .quantity(try plainReading(ids, Double(60 + index % 40), at: Double(offset + index), metadata: metadata))
        }
    }

    func testConfigurationDefaultsAndValidation() throws {
        let sink = try makeSink("{}")
        XCTAssertEqual(sink.store.path, path)
        XCTAssertEqual(sink.batchSize, 500)
        XCTAssertEqual(sink.batchWindow, .seconds(2))
        XCTAssertEqual(SQLiteSink.kind, "sqlite")
        for (json, key) in [
            (#"{"batchSize": 0}"#, "batchSize"), (#"{"batchWindowSeconds": -1}"#, "batchWindowSeconds"),
            (#"{"batchWindowSeconds": 61}"#, "batchWindowSeconds"),
        ] {
            XCTAssertThrowsError(try makeSink(json), json) { error in
                XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, key)
            }
        }
        // The store's own keys moved to the gateway's `store` object; the error says where.
        for key in ["path", "maxDatabaseMegabytes", "tombstoneRetentionDays"] {
            XCTAssertThrowsError(try makeSink(#"{"\#(key)": 1}"#), key) { error in
                XCTAssertTrue("\(error)".contains("store.\(key)"), "\(error)")
            }
        }
    }

    func testWithoutAStoreInTheEnvironmentTheSinkIsNotBuilt() throws {
        let environment = TestEnvironment.make(clock: clock, directory: directory)
        XCTAssertThrowsError(
            try SQLiteSink(settings: .init(batchSize: 1, batchWindow: .zero), environment: environment)
        ) { error in
            XCTAssertTrue("\(error)".contains("no store"), "\(error)")
        }
    }

    func testSampleConfigBuildsThroughTheCatalog() throws {
        let url = TestEnvironment.sampleConfigurationURL()
        let configuration = try GatewayConfiguration.load(from: url)
        let catalog = PluginCatalog([.sink(SQLiteSink.self)])
        let built = try catalog.instantiate(configuration) { name in
            TestEnvironment.make(name: name, clock: self.clock, directory: self.directory, store: self.store)
        }
        let sink = try XCTUnwrap(built.sinks.first?.sink as? SQLiteSink)
        XCTAssertEqual(built.sinks.first?.name, "store")
        XCTAssertEqual(sink.batchSize, 500)
        XCTAssertEqual(sink.batchWindow, .seconds(2))
        XCTAssertEqual(configuration.store?["path"], .string("/var/lib/healthgate/samples.sqlite"))
    }

    func testBatchesBySize() async throws {
        let sink = try makeSink(#"{"batchSize": 4, "batchWindowSeconds": 0.1}"#)
        let (inbox, feed, finish) = SinkInbox.standalone()
        await feed(try records(10))
        let context = context()
        let run = Task { try await sink.run(inbox: inbox, context: context) }
        // Two full batches commit at once; the short third one waits for the window.
        try await waitUntil("two transactions") { context.status.current?.details["transactions"] == "2" }
        try await clock.waitForSleepers(1)
        XCTAssertEqual(try count("samples"), 8)
        XCTAssertEqual(context.status.current?.records, 8)
        clock.advance(by: .milliseconds(100))
        try await waitUntil("three transactions") { context.status.current?.details["transactions"] == "3" }
        XCTAssertEqual(try count("samples"), 10)
        XCTAssertEqual(context.status.current?.lastRecordDate, at(9))
        finish()
        try await run.value
    }

    func testBatchesByWindowInOneTransaction() async throws {
        let (feed, finish, context, run) = try startSink(#"{"batchSize": 100, "batchWindowSeconds": 0.25}"#)
        let all = try records(5)
        await feed(Array(all[0..<3]))
        try await clock.waitForSleepers(1)
        await feed(Array(all[3..<5]))  // arrives within the window
        clock.advance(by: .milliseconds(249))
        // The window has not passed yet: the sink waits on.
        try await clock.waitForSleepers(1)
        XCTAssertNil(context.status.current?.details["transactions"])
        XCTAssertEqual(try count("samples"), 0)
        clock.advance(by: .milliseconds(1))
        try await waitUntil("one transaction") { context.status.current?.details["transactions"] == "1" }
        XCTAssertEqual(try count("samples"), 5)
        XCTAssertEqual(context.status.current?.records, 5)
        finish()
        try await run.value
        XCTAssertEqual(context.status.current?.details["transactions"], "1")
    }

    func testABatchThatFillsDuringTheWindowCommitsEarly() async throws {
        let (feed, finish, context, run) = try startSink(#"{"batchSize": 5, "batchWindowSeconds": 0.10}"#)
        let all = try records(5)
        await feed(Array(all[0..<2]))
        try await clock.waitForSleepers(1)
        await feed(Array(all[2..<5]))
        // One look at the inbox (a twentieth of the window) later, the full batch is committed.
        clock.advance(by: .milliseconds(50))
        try await waitUntil("one transaction") { context.status.current?.details["transactions"] == "1" }
        XCTAssertEqual(clock.elapsed, .milliseconds(50))
        XCTAssertEqual(try count("samples"), 5)
        finish()
        try await run.value
    }

    /// Two readings of one sync identifier and version that say different things (#78: a GHS
    /// sensor's code and a bundle's SpO2 of one second): the first stays, the second is refused
    /// with a warning naming it and the status's count. The first sent again, even placed at
    /// another time (a record downloaded again), is a duplicate.
    func testAReadingWithAStoredIdentityAndAnotherValueIsRefusedAloud() async throws {
        let sink = try makeSink(#"{"batchSize": 1, "batchWindowSeconds": 0.1}"#)
        let (inbox, feed, finish) = SinkInbox.standalone()
        let logs = RecordingLogSink()
        let context = SinkContext(
            logger: Logger(label: "sqlite", sink: logs, level: .debug), clock: clock,
            status: board.register(name: "sqlite", kind: "sqlite", role: .sink))
        let identifier = "Acme/GHS-7/ghs/2021-11-20T11:50:10.000Z/150456/numeric/544/object"
        func spo2(_ value: Double, at seconds: Double = 10) throws -> HealthRecord {
            var metadata = Metadata()
            metadata.syncIdentifier = identifier
            metadata.syncVersion = 1
            return .quantity(
                try QuantitySample(
                    id: SampleID(syncIdentifier: identifier, version: 1), type: .oxygenSaturation, quantity: Quantity(value, .percent),
                    start: at(seconds), end: at(seconds), device: Self.strap, metadata: metadata))
        }
        await feed([try spo2(98), try spo2(98), try spo2(97), try spo2(98, at: 11)])
        let run = Task { try await sink.run(inbox: inbox, context: context) }
        try await waitUntil("four transactions") { context.status.current?.details["transactions"] == "4" }
        finish()
        try await run.value
        XCTAssertEqual(try sqlite3("SELECT value FROM samples"), "98.0")
        XCTAssertEqual(context.status.current?.details["duplicatesIgnored"], "2")
        XCTAssertEqual(context.status.current?.details["readingsRefused"], "1")
        let warnings = logs.entries.filter { $0.level == .warning }.map(\.message)
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.allSatisfy { $0.hasPrefix("refused 1 reading whose sync identifier and version are stored already") && $0.hasSuffix(identifier) }, "\(warnings)")
    }

    func testFullDiskThrowsClearErrorKeepsCommittedDataAndRedeliveryLandsOnce() async throws {
        // Some committed data first.
        let ids = makeIDs()
        let committed = try records(50, ids: ids)
        try await store.write(committed)
        let pages = try XCTUnwrap(Int(try sqlite3("PRAGMA page_count")))

        let sink = try makeSink(#"{"batchSize": 5000, "batchWindowSeconds": 0}"#)
        try await store.setMaximumPageCount(pages)  // the database may not grow: SQLITE_FULL
        let (inbox, feed, finish) = SinkInbox.standalone()
        let batch = try records(2000, ids: ids, from: 1000)
        await feed(batch)
        let context = context()
        do {
            try await sink.run(inbox: inbox, context: context)
            XCTFail("the sink committed into a full database")
        } catch let error as StoreError {
            XCTAssertEqual(error.code, .diskFull)
            XCTAssertEqual(error.path, path)
            XCTAssertTrue(error.description.contains("disk full"), error.description)
            XCTAssertTrue(error.description.contains("database or disk is full"), error.description)
        }
        // Nothing of the failed transaction, everything committed before.
        XCTAssertEqual(try count("samples"), 50)
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")
        XCTAssertEqual(sink.uncommittedCount, 2000)

        // Space is freed; the supervisor restarts the sink, which commits the held batch, and the
        // inbox redelivers the same records: they land once.
        try await store.setMaximumPageCount(nil)
        let restarted = Task { try await sink.run(inbox: inbox, context: context) }
        try await waitUntil("the held batch committed") { context.status.current?.records == 2000 }
        await feed(batch)
        try await waitUntil("the redelivered batch handled") {
            context.status.current?.details["duplicatesIgnored"] == "2000"
        }
        finish()
        try await restarted.value
        XCTAssertEqual(try count("samples"), 2050)
        // Every sample has the same metadata (sensor location): one set, one entry, 2050 pointers.
        XCTAssertEqual(try count("metadata_sets"), 1)
        XCTAssertEqual(try count("metadata_entries"), 1)
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM samples WHERE metadata_set_id IS NOT NULL"), "2050")
        XCTAssertEqual(sink.uncommittedCount, 0)
    }

    func testAllRecordKindsAreAccepted() async throws {
        let sink = try makeSink(#"{"batchSize": 10, "batchWindowSeconds": 0}"#)
        let ids = makeIDs()
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: t0, end: at(1), beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)])
        let workout = Workout(id: ids.next(), activityType: .cycling, startDate: t0, endDate: at(60), duration: 60)
        let all: [HealthRecord] = [
            .quantity(try plainReading(ids, 42, at: 0)), .quantity(try heartRate(ids, 70, at: 0)), .heartbeatSeries(series),
            .workout(workout),
        ]
        XCTAssertTrue(all.allSatisfy(sink.accepts))
        let (inbox, feed, finish) = SinkInbox.standalone()
        await feed(all)
        finish()
        let context = context()
        try await sink.run(inbox: inbox, context: context)
        XCTAssertEqual(context.status.current?.records, 4)
        XCTAssertEqual(context.status.current?.lastRecordDate, at(60))
        XCTAssertEqual(try count("samples"), 1)
        XCTAssertEqual(try count("quantity_series"), 1, "the heart rate begins a quantity series")
        XCTAssertEqual(try count("heartbeat_series"), 1)
        XCTAssertEqual(try count("workouts"), 1)
    }
}

import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import RemoteSinkKit
import GatewayRuntime
import SampleBus
import XCTest

/// A follower of a store whose heart rates are folded into quantity series: a series that grows
/// moves to a new anchor with each version, so the follower sends each version it reads once,
/// in anchor order, the latest last (closed, not provisional, once the writer closed it); a
/// journal keeps an open series it sent until it closes.
final class FollowerSeriesTests: StoreTestCase {
    var clock: ManualClock!
    var store: HealthStore!
    var ids: SampleIDGenerator!

    override func setUp() async throws {
        try await super.setUp()
        let clock = ManualClock()
        self.clock = clock
        store = try await HealthStore.open(path: path, uptime: { clock.uptime() })
        ids = makeIDs()
    }

    override func tearDown() async throws {
        await store?.close()
        store = nil
        try await super.tearDown()
    }

    /// A follower `remote` of ``store`` sending to `receiver`, until `shutdown` asks it to stop.
    func start(_ receiver: ScriptedReceiver, shutdown: ShutdownSignal) -> Task<Void, any Error> {
        let follower = Follower(
            name: "remote", store: store, receiver: receiver,
            settings: FollowerSettings(
                batchSize: 10, batchInterval: .zero, maxInFlight: 1, follow: FollowConfiguration(),
                retry: RetryConfiguration(initialDelaySeconds: 1, maxDelaySeconds: 8, jitter: 0)),
            legacyOutbox: nil, random: { 0.5 })
        let context = FollowerContext(
            logger: Logger(label: "remote", sink: RecordingLogSink(), level: .debug), clock: SystemClock(),
            status: StatusBoard().register(name: "remote", kind: "scripted", role: .sink),
            stopRequest: StopRequest(shutdown), storeSettled: { true })
        return Task { try await follower.run(context: context) }
    }

    /// Waits until the follower's cursor reaches the store's latest anchor.
    func waitUntilSent() async throws {
        let store = self.store!
        let latest = try await store.latestAnchor()
        try await waitUntil("the follower reaches anchor \(latest)") { try await store.follower("remote")?.anchor == latest }
    }

    /// The series among `changes`, as sent.
    func series(_ changes: [FollowedChange]) -> [QuantitySeriesSample] {
        changes.compactMap { change in
            guard case .stored(.quantitySeries(let series), _) = change else { return nil }
            return series
        }
    }

    func testEachVersionOfAGrowingSeriesIsSentOnceAndTheClosedOneLast() async throws {
        let readings = try (0..<9).map { try heartRate(ids, 70 + Double($0), at: Double($0)) }
        _ = try await store.registerFollower("remote", startingAt: .beginning)
        let receiver = ScriptedReceiver()
        let shutdown = ShutdownSignal()
        let running = start(receiver, shutdown: shutdown)
        for batch in 0..<3 {
            try await store.write(readings[(batch * 3)..<(batch * 3 + 3)].map(HealthRecord.quantity))
            try await waitUntilSent()
        }
        // The strap went quiet: the writer closes its series, and the follower sends that version.
        clock.advance(by: .seconds(10))
        let closed = try await store.closeIdleSeries()
        XCTAssertEqual(closed, 1)
        try await waitUntilSent()
        shutdown.requestStop()
        try await running.value

        let sent = series(receiver.deliveredChanges)
        XCTAssertEqual(sent, [
            try storedSeries(Array(readings[0..<3]), version: 1), try storedSeries(Array(readings[0..<6]), version: 2),
            try storedSeries(readings, version: 3), try storedSeries(readings, version: 4, open: false),
        ])
        XCTAssertEqual(Set(sent.map(\.id)), [readings[0].id], "one series, its versions sharing its uuid")
        let anchors = receiver.deliveredChanges.map(\.anchor)
        XCTAssertEqual(anchors, [1, 2, 3, 4], "each version at its own anchor, in order")
        XCTAssertEqual(receiver.deliveredChanges.filter(\.isDeletion), [], "a version is no deletion")
    }

    func testAJournalKeepsAnOpenSeriesItSentUntilTheSeriesClosesAndIsSent() async throws {
        try await store.setRetention(.untilAcknowledged)
        _ = try await store.registerFollower("remote", startingAt: .beginning)
        let receiver = ScriptedReceiver()
        let shutdown = ShutdownSignal()
        let running = start(receiver, shutdown: shutdown)
        let readings = try (0..<5).map { try heartRate(ids, 80, at: Double($0)) }
        try await store.write(readings.map(HealthRecord.quantity) + [.quantity(try plainReading(ids, 40, at: 0))])
        try await waitUntilSent()
        XCTAssertEqual(try count("samples"), 0, "the sample sent went")
        XCTAssertEqual(try count("quantity_series"), 1, "the open series stays: it still grows")
        let more = try heartRate(ids, 81, at: 5)
        try await store.write([.quantity(more)])
        try await waitUntilSent()
        let kept = try await store.samples(of: .heartRate)
        XCTAssertEqual(kept, try storedQuantities(readings + [more]), "the series grows on, whole")
        clock.advance(by: .seconds(10))
        try await store.closeIdleSeries()
        try await waitUntilSent()
        XCTAssertEqual(try count("quantity_series"), 0, "closed and sent, it goes")
        shutdown.requestStop()
        try await running.value
        XCTAssertEqual(series(receiver.deliveredChanges).last, try storedSeries(readings + [more], version: 3, open: false))
    }
}

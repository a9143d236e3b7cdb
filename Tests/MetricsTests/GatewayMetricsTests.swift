import Foundation
import GatewayRuntime
import GatewayTesting
import GatewayTime
import HealthModel
import HealthStore
import Metrics
import SampleBus
import Synchronization
import XCTest

/// The exposition ``GatewayMetrics`` renders, without a server: families in their order with one
/// HELP and TYPE each, labels sorted and escaped, a plugin's own numbers under the families the
/// gateway declares (others left out), followers from the store, and the clock.
final class GatewayMetricsTests: XCTestCase {
    func testTheExpositionNamesEveryFamilyOnceAndEscapesLabels() async throws {
        let directory = try TestEnvironment.temporaryDirectory("metrics")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try HealthStore(path: directory.appendingPathComponent("store.sqlite").path)
        let ids = SampleIDGenerator(seed: 4)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.write((0..<3).map { index in
            .quantity(try! QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(70, .countPerMinute), start: start.addingTimeInterval(Double(index)),
                end: start.addingTimeInterval(Double(index))))
        })
        _ = try await store.registerFollower("broker", startingAt: .beginning)
        let board = StatusBoard()
        let strap = board.register(name: "straps \"east\"", kind: "ble-heart-rate", role: .source)
        strap.recordsHandled(12, lastDate: nil)
        strap.setMetric("healthgate_device_battery_ratio", ["device": "AA:BB", "adapter": "hci0"], 0.5)
        strap.setMetric("healthgate_made_up", ["device": "AA:BB"], 1)
        let clock = ManualClock(start: start.addingTimeInterval(60))
        // A strap heard connected and broadcasting: the broadcast's copy is dropped.
        let arbiter = HeartRateArbiter(clock: clock)
        let connected = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "A0:9E:1A:12:34:56", radioIdentifier: "A0:9E:1A:12:34:56")
        let broadcast = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "1A2B3C4D", radioIdentifier: "1A2B3C4D")
        for device in [connected, broadcast] {
            _ = arbiter.admit([.quantity(try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(80, .countPerMinute), start: start, end: start, device: device))])
        }
        let storeFacts = StoreFactsWatch(store: store, clock: clock)
        try await storeFacts.refresh()
        let metrics = GatewayMetrics(
            statusBoard: board, storeFacts: storeFacts, clockTrust: FixedClockTrust(.synchronized(maximumErrorSeconds: 0.25)), clock: clock,
            queueDepths: { [("store", 7)] }, heartRateArbiter: arbiter)
        let text = await metrics.render()
        XCTAssertTrue(text.contains("\nhealthgate_heart_rate_dropped_readings_total 1\n"), text)
        XCTAssertTrue(text.contains("\nhealthgate_heart_rate_handovers_total 0\n"), text)

        for family in ["healthgate_plugin_records_total", "healthgate_device_battery_ratio", "healthgate_follower_lag_records"] {
            XCTAssertEqual(text.components(separatedBy: "# TYPE \(family) ").count, 2, "one TYPE line for \(family)")
            XCTAssertEqual(text.components(separatedBy: "# HELP \(family) ").count, 2, "one HELP line for \(family)")
        }
        XCTAssertTrue(text.contains(#"healthgate_plugin_records_total{kind="ble-heart-rate",plugin="straps \"east\"",role="source"} 12"#), text)
        XCTAssertTrue(text.contains(#"healthgate_device_battery_ratio{adapter="hci0",device="AA:BB",plugin="straps \"east\""} 0.5"#), text)
        XCTAssertFalse(text.contains("healthgate_made_up"), "a name the gateway does not declare is not exposed")
        XCTAssertTrue(text.contains(#"healthgate_sink_queue_records{sink="store"} 7"#))
        // The three heart rates are one quantity series: one change.
        XCTAssertTrue(text.contains(#"healthgate_follower_lag_records{follower="broker"} 1"#), text)
        XCTAssertTrue(text.contains("healthgate_store_latest_anchor 1\n"), text)
        XCTAssertTrue(text.contains("healthgate_store_stuck_seconds 0\n"), text)
        XCTAssertTrue(text.contains("healthgate_clock_synchronized 1\n"))
        XCTAssertTrue(text.contains("healthgate_clock_maximum_error_seconds 0.25\n"))
        // The background migration's steps: a store created at this version has both, with
        // nothing to move, finished from the start.
        XCTAssertTrue(text.contains(#"healthgate_store_migration_rows{step="heartbeats"} 0"#), text)
        XCTAssertTrue(text.contains(#"healthgate_store_migration_finished{step="workout_samples"} 1"#), text)
        let order = GatewayMetrics.families.map(\.name).filter { text.contains("# TYPE \($0) ") }
        let written = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) }
        XCTAssertEqual(written, order, "families in the declared order")
        for step in ["heartbeats", "workout_samples"] {
            XCTAssertTrue(text.contains("healthgate_store_migration_done_rows{step=\"\(step)\"} 0\n"), text)
        }
    }

    /// systemd's watchdog: its families only while systemd watches, the withheld flag as the
    /// report says.
    func testTheWatchdogFamiliesFollowTheReport() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let report = Mutex<WatchdogReport?>(nil)
        let metrics = GatewayMetrics(
            statusBoard: StatusBoard(), storeFacts: nil, clockTrust: FixedClockTrust(.unsynchronized), clock: clock,
            queueDepths: { [] }, watchdog: { report.withLock { $0 } })
        var text = await metrics.render()
        XCTAssertFalse(text.contains("healthgate_watchdog"), "no watchdog families when systemd does not watch: \(text)")

        report.withLock {
            $0 = WatchdogReport(
                timeoutSeconds: 60, lastPing: Date(timeIntervalSince1970: 1_800_000_030), pings: 4,
                lastCheck: Date(timeIntervalSince1970: 1_800_000_030))
        }
        text = await metrics.render()
        XCTAssertTrue(text.contains("\nhealthgate_watchdog_timeout_seconds 60\n"), text)
        XCTAssertTrue(text.contains("\nhealthgate_watchdog_pings_total 4\n"), text)
        XCTAssertTrue(text.contains("\nhealthgate_watchdog_last_ping_timestamp_seconds 1800000030\n"), text)
        XCTAssertTrue(text.contains("\nhealthgate_watchdog_withheld 0\n"), text)

        report.withLock {
            $0?.withheld = "the store's writer has been in one call for 31 s"
            $0?.withheldSince = Date(timeIntervalSince1970: 1_800_000_060)
        }
        text = await metrics.render()
        XCTAssertTrue(text.contains("\nhealthgate_watchdog_withheld 1\n"), text)
    }
}

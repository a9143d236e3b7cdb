import BLEProfileKit
import BLETesting
import BLETransport
import ContinuousGlucose
import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import SampleBus
import XCTest

/// The demo's simulated sensor through the whole source: the history comes through the control
/// point, each new record live, and a second connection adds only what is new.
final class SimulatedCGMTests: XCTestCase {
    func testHistoryThenLiveRecordsAndNothingTwiceAfterAReconnect() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let settings = CGMSimulationConfiguration(sensors: 1, recordIntervalMinutes: 5, historyMinutes: 30)
        let transport = LinkDroppingTransport(SimulatedCGMTransport(clock: clock, settings: settings))
        // The transport the test hands in (as the gateway's Bluetooth), not the kit's own simulator.
        let configuration = CGMConfiguration(maxDevices: 1, profile: CGMProfileConfiguration(simulation: settings))
        let h = try SourceHarness(name: "cgm", kind: CGMSource.kind, clock: clock) { environment in
            try CGMSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
        try await h.run { h in
            // Offsets 0, 5, …, 30: the session's first half hour.
            try await h.waitFor("the history") { h.quantities(.bloodGlucose).count == 7 }
            try await h.waitFor("the sensor waiting for its next record") { h.clock.sleeperCount >= 1 }
            h.clock.advance(by: .seconds(300))
            try await h.waitFor("the live record") { h.quantities(.bloodGlucose).count == 8 }
            await transport.dropLinks()
            h.clock.advance(by: .seconds(300))
            try await h.waitFor("the end of the link") { h.logs.entries.contains { $0.message.contains("notifications ended") } }
            // The reconnect's backoff runs on the same clock.
            for _ in 0..<100 where transport.connections < 2 {
                h.clock.advance(by: .seconds(1))
                try await Task.sleep(for: .milliseconds(20))
            }
            try await h.waitFor("the record taken while the link was down") { h.quantities(.bloodGlucose).count == 9 }
        }
        XCTAssertEqual(transport.connections, 2)
        let samples = h.quantities(.bloodGlucose)
        let offsets = samples.compactMap { sample -> Int? in
            if case .integer(let offset) = sample.metadata[.cgmTimeOffsetMinutes] { return Int(offset) }
            return nil
        }
        XCTAssertEqual(offsets, Array(stride(from: 0, through: 40, by: 5)))
        XCTAssertEqual(Set(samples.compactMap(\.metadata.syncIdentifier)).count, 9)
        // The gateway set the session start (the sensor had none) to its time less the offset.
        let start = Date(timeIntervalSince1970: 1_800_000_000 - 30 * 60)
        XCTAssertEqual(samples.map(\.startDate), offsets.map { start.addingTimeInterval(Double($0) * 60) })
        XCTAssertTrue(samples.allSatisfy { (85...135).contains($0.quantity.value) })
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("asked for the stored records from time offset 36 min") }, "\(h.logs.entries.map(\.message))")
        XCTAssertFalse(h.logs.entries.contains { $0.message.contains("bad payload") })
    }
}

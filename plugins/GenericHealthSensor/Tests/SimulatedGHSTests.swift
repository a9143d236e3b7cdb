import BLEProfileKit
import BLETesting
import BLETransport
import Foundation
import GatewayRuntime
import GatewayTesting
import GenericHealthSensor
import HealthModel
import SampleBus
import XCTest

/// The demo's simulated sensors through the whole source: each one's stored observations come
/// through the Record Access Control Point, counted first, then live ones (three segments each),
/// and a second connection counts and fetches only what the sensor stored while the link was down.
final class SimulatedGHSTests: XCTestCase {
    func testStoredThenLiveObservationsAndNothingTwiceAfterAReconnect() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let settings = GHSSimulationConfiguration(oximeters: 1, cuffs: 1, observationIntervalSeconds: 5, storedObservations: 6)
        let transport = LinkDroppingTransport(SimulatedGHSTransport(clock: clock, settings: settings))
        let configuration = GHSConfiguration(maxDevices: 2, profile: GHSProfileConfiguration(simulation: settings))
        let h = try SourceHarness(name: "ghs", kind: GHSSource.kind, clock: clock) { environment in
            try GHSSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
        @Sendable func pressures() -> [CorrelationSample] { h.sink.records.compactMap { if case .correlation(let c) = $0 { c } else { nil } } }
        let sensors = ["02:00:00:00:0A:01", "02:00:00:00:0A:41"]
        // A record number is the observation's 5 s slot since 2000, + 1: observation 0 is taken
        // at 1_799_999_970 (six intervals before the start), 853_315_170 s after 2000, slot
        // 170_663_034. So a simulator run again later numbers on from where the last run ended.
        let first = 170_663_035
        @Sendable func downloadsOver() -> Bool { sensors.allSatisfy { h.current.details["\($0).storedObservationsPending"] == "0" } }
        // Advances the clock 5 s (an observation interval), then a second at a time until `done`,
        // at most 4 more: a sensor whose feed registered its sleep just after the advance wakes a
        // second later, not never, and no further observation falls due. (The feed computes its
        // wait, then sleeps in a child task; "2 sleepers" does not prove both feeds sleep. In a
        // loaded CI run one did not, and the test timed out.)
        @Sendable func advanceAnInterval(until what: String, _ done: @escaping @Sendable () -> Bool) async throws {
            h.clock.advance(by: .seconds(5))
            for _ in 0..<4 {
                if (try? await waitUntil(timeout: .seconds(1), what) { done() }) != nil { return }
                h.clock.advance(by: .seconds(1))
            }
            try await h.waitFor(what) { done() }
        }
        try await h.run { h in
            // Observations 0…6: taken before the gateway started, stored (the seventh is due now).
            try await h.waitFor("the stored observations") {
                h.quantities(.oxygenSaturation).count == 7 && h.quantities(.respiratoryRate).count == 7 && pressures().count == 7
            }
            // Nothing pending once each download's stall watch ended: then the clock's sleepers are
            // the sensors waiting for their next observation.
            try await h.waitFor("the downloads' end") { downloadsOver() }
            try await h.waitFor("both sensors waiting for their next observation") { h.clock.sleeperCount >= 2 }
            // Observation 7, live, 5 s on (and not observation 8, 10 s on).
            try await advanceAnInterval(until: "the live observations") { h.quantities(.oxygenSaturation).count == 8 && pressures().count == 8 }
            await transport.dropLinks()
            // Observation 8 falls due while the links are down: the sensors store it.
            h.clock.advance(by: .seconds(5))
            try await h.waitFor("the end of the links") { h.logs.entries.filter { $0.message.contains("notifications ended") }.count == 2 }
            for _ in 0..<100 where transport.connections < 4 {
                h.clock.advance(by: .seconds(1))
                try await Task.sleep(for: .milliseconds(20))
            }
            // Records first…first + 6 were stored: each sensor is asked for what came after, and
            // sends record first + 8.
            try await h.waitFor("the requests after the checkpoint") {
                h.logs.entries.filter { $0.message.contains("asked for the stored observations from record \(first + 7)") }.count == 2
            }
            try await h.waitFor("the observation stored while the links were down") {
                h.quantities(.oxygenSaturation).count == 9 && pressures().count == 9
            }
            try await h.waitFor("the downloads' end") { downloadsOver() }
            try await h.waitFor("both sensors waiting again") { h.clock.sleeperCount >= 2 }
            try await advanceAnInterval(until: "the next live observation") {
                h.quantities(.oxygenSaturation).count == 10 && pressures().count == 10
            }
        }
        XCTAssertEqual(transport.connections, 4)
        let spo2 = h.quantities(.oxygenSaturation)
        XCTAssertEqual(Set(spo2.compactMap(\.metadata.syncIdentifier)).count, spo2.count, "nothing twice")
        XCTAssertEqual(spo2.map(\.startDate), spo2.map(\.startDate).sorted())
        let start = Date(timeIntervalSince1970: 1_800_000_000 - 30)
        XCTAssertEqual(spo2.map(\.startDate), (0..<10).map { start.addingTimeInterval(Double($0) * 5) })
        XCTAssertEqual(
            spo2.map { $0.metadata[.ghsRecordNumber] }, (0...6).map { .integer(Int64(first + $0)) } + [nil, .integer(Int64(first + 8)), nil],
            "stored, live, stored, live")
        XCTAssertTrue(spo2.allSatisfy { (95...99).contains($0.quantity.value) })
        XCTAssertTrue(h.quantities(.respiratoryRate).allSatisfy { (14...18).contains($0.quantity.value) })
        XCTAssertTrue(h.quantities(.heartRate).isEmpty, "no pulse rate: the demo's classes see no heart rate from it")
        XCTAssertTrue(pressures().allSatisfy { $0.metadata[.meanArterialPressure] != nil })
        XCTAssertFalse(h.logs.entries.contains { $0.message.contains("bad payload") }, "\(h.logs.entries.filter { $0.message.contains("bad payload") }.map(\.message))")
        // Each sensor counted what it held before sending it: 7 at first, then the one stored
        // while the links were down; and sent as many as it counted.
        let counts = h.logs.entries.map(\.message).filter { $0.hasPrefix("the sensor holds") }
        XCTAssertEqual(
            counts.sorted(),
            ["the sensor holds 1 stored observation from record \(first + 7)", "the sensor holds 7 stored observations"].flatMap { [$0, $0] },
            "\(counts)")
        for sensor in sensors {
            XCTAssertNil(h.current.details["\(sensor).storedObservationsMissing"])
        }
    }
}

import BLEProfileKit
import BLETesting
import BLETransport
import Foundation
import GatewayTesting
import HealthModel
import HeartRateMonitor
import SampleBus
import XCTest

/// Energy Expended (cumulative kJ) becomes `activeEnergyBurned` deltas between readings.
final class EnergyExpendedTests: XCTestCase {
    /// Flags 0x08: uint8 heart rate, energy expended present, no contact support, no RR.
    static func beat(_ bpm: UInt8, energy: UInt16) -> [UInt8] {
        [0x08, bpm, UInt8(energy & 0xFF), UInt8(energy >> 8)]
    }

    /// Runs the source against one heart-rate monitor and hands `body` the harness, the link and
    /// the monitor once the source subscribed to its measurements.
    private func withSubscribedMonitor(
        _ body: @Sendable (SourceHarness, FakeConnection, FakeProfile) async throws -> Void
    ) async throws {
        let profile = FakeProfile.heartRateMonitor()
        let transport = FakeBLETransport(profiles: [profile])
        let h = try SourceHarness(transport: transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscription") { $0.isSubscribed(.heartRateMeasurement) }
            try await body(h, link, profile)
        }
    }

    func testDeltasAcrossReadingsSaturationAndReset() async throws {
        try await withSubscribedMonitor { h, link, _ in
            // 100 kJ is the baseline; then +3, +0, saturation (adds nothing), reset to 2 (+2).
            for (second, energy) in [(0, UInt16(100)), (1, 103), (2, 103), (3, 0xFFFF), (4, 2)] {
                if second > 0 { h.clock.advance(by: .seconds(1)) }
                link.send(Self.beat(120, energy: energy))
                try await h.waitFor("heart rate \(second)") { h.quantities(.heartRate).count == second + 1 }
            }
            let energy = h.quantities(.activeEnergyBurned)
            XCTAssertEqual(energy.map(\.quantity), [Quantity(3, .kilojoule), Quantity(2, .kilojoule)])
            // Each delta covers the interval since the previous unsaturated reading.
            let start = try XCTUnwrap(h.quantities(.heartRate).first?.startDate)
            XCTAssertEqual(energy.map { $0.startDate.timeIntervalSince(start) }, [0, 2])
            XCTAssertEqual(energy.map { $0.endDate.timeIntervalSince(start) }, [1, 4])
            XCTAssertEqual(energy.first?.canonicalValue ?? 0, 3 / 4.184, accuracy: 1e-12)
        }
    }

    /// While contact is "supported, not detected", no energy is stored, and the energy the
    /// sensor counts meanwhile is not attributed to the next reading with contact either.
    func testNoContactReadingsStoreNoEnergyAndRebaseline() async throws {
        try await withSubscribedMonitor { h, link, profile in
            // Flags 0x1E: contact supported and detected, energy, RR; 0x0C: the same without
            // RR and contact not detected. 100 kJ baseline, +3 with contact, then 10 s without
            // contact counting 20 kJ, then +4 with contact again.
            link.send([0x1E, 70, 100, 0, 0x00, 0x04])
            try await h.waitFor("baseline") { h.quantities(.heartRate).count == 1 }
            h.clock.advance(by: .seconds(1))
            link.send([0x1E, 72, 103, 0, 0x00, 0x04])
            try await h.waitFor("first delta") { h.quantities(.activeEnergyBurned).count == 1 }
            for second in 1...10 {
                h.clock.advance(by: .seconds(1))
                link.send([0x0C, 0, UInt8(103 + 2 * second), 0])
                try await h.waitFor("no-contact reading \(second)") { h.current.dropped == second }
            }
            h.clock.advance(by: .seconds(1))
            link.send([0x1E, 74, 127, 0, 0x00, 0x04])
            try await h.waitFor("heart rate with contact again") { h.quantities(.heartRate).count == 3 }
            XCTAssertEqual(h.quantities(.activeEnergyBurned).map(\.quantity), [Quantity(3, .kilojoule), Quantity(4, .kilojoule)])
            // The second delta covers only the second since the last no-contact reading.
            let second = try XCTUnwrap(h.quantities(.activeEnergyBurned).last)
            XCTAssertEqual(second.endDate.timeIntervalSince(second.startDate), 1, accuracy: 1e-6)
            XCTAssertEqual(h.current.details["\(profile.address).droppedNoContact"], "10")
        }
    }
}

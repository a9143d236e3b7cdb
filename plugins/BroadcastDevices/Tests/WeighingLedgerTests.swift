import BroadcastDevices
import Foundation
import XCTest

/// A weighing is stored once whatever order its advertisements arrive in, and across a restart.
final class WeighingLedgerTests: XCTestCase {
    /// The advertisements of one weighing captured by a user (custom-components/ble_monitor
    /// issue 292, 0x181D): measuring, stabilised, stepped off, at 4.95 kg, same clock.
    static let captured: [[UInt8]] = [
        [0x02, 0xDE, 0x03, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x29],  // 4.95 kg, not stabilised
        [0x22, 0xDE, 0x03, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x29],  // the same, stabilised (bit 5)
        [0x82, 0xDE, 0x03, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x29],  // stepped off (as logged)
        [0xA2, 0xDE, 0x03, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x29],  // stepped off, stabilised
    ]

    func testEveryOrderStoresOnce() throws {
        let readings = try Self.captured.map { try MiScaleDecoder.decode($0, service: .weightScale) }
        for order in permutations(Array(readings.indices)) {
            var ledger = WeighingLedger()
            let admitted = order.filter { ledger.admit(readings[$0]) }
            XCTAssertEqual(admitted.count, 1, "order \(order)")
        }
    }

    func testRestartKeepsTheLedger() throws {
        let reading = try MiScaleDecoder.decode(Self.captured[1], service: .weightScale)
        var ledger = WeighingLedger()
        XCTAssertTrue(ledger.admit(reading))
        var restored = try JSONDecoder().decode(WeighingLedger.self, from: JSONEncoder().encode(ledger))
        XCTAssertFalse(restored.admit(reading))
        XCTAssertEqual(restored, ledger)
    }

    /// A body composition scale's weighing (custom-components/ble_monitor issue 1094, 0x181B:
    /// `02A6B207010312183AF3018048`, stepped off, stabilised, 499 ohms, 92.8 kg), preceded by the
    /// same weighing stabilised before its impedance (bit 1 clear), as the scale sends it: the
    /// weight is new with the first, the impedance with the second, in either order.
    func testTheImpedanceOfAWeighingStoredBefore() throws {
        let withImpedance: [UInt8] = [0x02, 0xA6, 0xB2, 0x07, 0x01, 0x03, 0x12, 0x18, 0x3A, 0xF3, 0x01, 0x80, 0x48]
        var without = withImpedance
        without[1] = 0x24
        (without[9], without[10]) = (0, 0)
        let early = try MiScaleDecoder.decode(without, service: .bodyComposition)
        let late = try MiScaleDecoder.decode(withImpedance, service: .bodyComposition)
        XCTAssertEqual(late.impedance, 499)
        XCTAssertEqual(late.weightKilograms, 92.8)
        for order in [[early, late, late, early], [late, early, late]] {
            var ledger = WeighingLedger()
            let weights = order.map { ledger.admit($0) }
            let impedances = order.map { ledger.admitImpedance($0) }
            XCTAssertEqual(weights.filter { $0 }.count, 1)
            XCTAssertEqual(impedances.filter { $0 }.count, 1)
            XCTAssertEqual(impedances.firstIndex(of: true), order.firstIndex(of: late))
            let restored = try JSONDecoder().decode(WeighingLedger.self, from: JSONEncoder().encode(ledger))
            var copy = restored
            XCTAssertFalse(copy.admitImpedance(late))
        }
        // A checkpoint written before the impedance was remembered still decodes.
        let old = try JSONDecoder().decode(WeighingLedger.self, from: Data(#"{"stored":[]}"#.utf8))
        XCTAssertNil(old.measuredImpedance)
    }

    func testBounded() throws {
        var ledger = WeighingLedger()
        for minute in 0..<(WeighingLedger.capacity + 10) {
            let bytes: [UInt8] = [0x22, 0xDE, 0x03, 0xEA, 0x07, 1, 1, UInt8(minute / 60), UInt8(minute % 60), 0]
            XCTAssertTrue(ledger.admit(try MiScaleDecoder.decode(bytes, service: .weightScale)))
        }
        XCTAssertEqual(ledger.stored.count, WeighingLedger.capacity)
    }

    func permutations(_ items: [Int]) -> [[Int]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[Int]] in
            var rest = items
            let head = rest.remove(at: i)
            return permutations(rest).map { [head] + $0 }
        }
    }
}

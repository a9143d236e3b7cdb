import BroadcastDevices
import Foundation
import SampleBus
import XCTest

/// Polar's manufacturer data against published vectors, each cited, in every truncation.
final class PolarBroadcastDecoderTests: XCTestCase {
    /// One published payload (manufacturer data after the company id 0x006B), the heart-rate
    /// block it holds, and the prefix lengths that are whole payloads of their own (a block
    /// boundary, or a 4-byte heart-rate block cut to its 3-byte legacy form).
    struct Vector {
        let source: String
        let bytes: [UInt8]
        let expected: Expected?
        let wholePrefixes: Set<Int>
    }

    struct Expected: Equatable {
        let slow: Int, fast: Int, counter: UInt8, contact: Bool, batteryOk: Bool, legacy: Bool
    }

    static let vectors: [Vector] = [
        // polar-ble-sdk, sources/iOS/ios-communications/Tests/iOSCommunicationsTests/BleAdvertisementContentTest.swift
        // (commit 8fb5311c), testParseHrFromManufacturerDataWithoutHr: protobuf data only, no heart rate.
        Vector(
            source: "polar-ble-sdk BleAdvertisementContentTest testParseHrFromManufacturerDataWithoutHr",
            bytes: [0x72, 0x08, 0x97, 0xC9, 0xC3, 0x00, 0x00, 0x00, 0x00, 0x00], expected: nil, wholePrefixes: [0, 10]),
        // Ibid., testParseHrFromManufacturerDataSAGRFC23format: two data blocks, then a 3-byte heart-rate block.
        Vector(
            source: "polar-ble-sdk BleAdvertisementContentTest testParseHrFromManufacturerDataSAGRFC23format",
            bytes: [0x72, 0x08, 0x97, 0xC9, 0xC3, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7A, 0x01, 0x03, 0x33, 0x00, 0x00],
            expected: Expected(slow: 0, fast: 0, counter: 4, contact: true, batteryOk: true, legacy: true),
            wholePrefixes: [0, 10, 13, 16]),
        // Ibid., testParseHrFromManufacturerDataSAGRFC31format: one 4-byte heart-rate block.
        Vector(
            source: "polar-ble-sdk BleAdvertisementContentTest testParseHrFromManufacturerDataSAGRFC31format",
            bytes: [0x2B, 0x0B, 0xB6, 0xAC],
            expected: Expected(slow: 0xAC, fast: 0xB6, counter: 2, contact: true, batteryOk: true, legacy: false),
            wholePrefixes: [0, 3, 4]),
        // polar-ble-sdk, sources/iOS/ios-communications/Sources/iOSCommunications/ble/api/model/advertisement/
        // BleAdvertisementContent.swift: "polar manufacturer data example from OH1: 6b 00 72 06 7f 44 37 00 00 00 33 00 3c".
        Vector(
            source: "polar-ble-sdk BleAdvertisementContent.swift, the OH1 example",
            bytes: [0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00, 0x33, 0x00, 0x3C],
            expected: Expected(slow: 60, fast: 60, counter: 4, contact: true, batteryOk: true, legacy: true),
            wholePrefixes: [0, 8, 11]),
    ]

    func testPublishedPayloads() throws {
        for vector in Self.vectors {
            let decoded = try PolarBroadcastDecoder.decode(vector.bytes)
            XCTAssertEqual(decoded.heartRate.map(Self.expected), vector.expected, vector.source)
        }
    }

    /// Every prefix of every vector: a whole payload decodes, any other throws `truncated`.
    func testEveryTruncation() {
        for vector in Self.vectors {
            for length in 0..<vector.bytes.count {
                let prefix = Array(vector.bytes.prefix(length))
                do {
                    _ = try PolarBroadcastDecoder.decode(prefix)
                    XCTAssertTrue(vector.wholePrefixes.contains(length), "\(vector.source): \(length) bytes decoded")
                } catch {
                    XCTAssertFalse(vector.wholePrefixes.contains(length), "\(vector.source): \(length) bytes: \(error)")
                    XCTAssertEqual(error.code, .truncated, vector.source)
                }
            }
        }
    }

    /// The status-byte vectors of polar-ble-sdk's BlePolarHrAdvertisementTest (Android,
    /// sources/Android/android-communications/library/src/test/.../BlePolarHrAdvertisementTest.kt,
    /// commit 8fb5311c) are heart-rate blocks given to the block parser directly: the battery bit
    /// (0xFE → 0, 0xFF → 1, which `PolarHrBroadcastData.batteryStatus` reports as `!= 0`), the
    /// frame counter (0xE3 → 0, 0xE7 → 1, 0xFF → 7) and the averages.
    func testSDKHeartRateBlocks() throws {
        XCTAssertEqual(try PolarBroadcastDecoder.decodeHeartRateBlock([0xFE, 0xFE, 0xFE, 0xFE]).batteryOk, false)
        XCTAssertEqual(try PolarBroadcastDecoder.decodeHeartRateBlock([0xFF, 0xFE, 0xFE, 0xFE]).batteryOk, true)
        XCTAssertEqual(try PolarBroadcastDecoder.decodeHeartRateBlock([0xE3, 0xFE, 0xFE, 0xFE]).frameCounter, 0)
        XCTAssertEqual(try PolarBroadcastDecoder.decodeHeartRateBlock([0xE7, 0xFE, 0xFE, 0xFE]).frameCounter, 1)
        XCTAssertEqual(try PolarBroadcastDecoder.decodeHeartRateBlock([0xFF, 0xFE, 0xFE, 0xFE]).frameCounter, 7)
        XCTAssertEqual(try PolarBroadcastDecoder.decodeHeartRateBlock([0xFF, 0x00, 0xFF, 0xFF]).khzCode, 0)
        XCTAssertEqual(try PolarBroadcastDecoder.decodeHeartRateBlock([0xFF, 0xFF, 0xFF, 0xFF]).khzCode, 255)
        let zero = try PolarBroadcastDecoder.decodeHeartRateBlock([0xFF, 0xFF, 0x00, 0x00])
        XCTAssertEqual([zero.fastAverageHeartRate, zero.slowAverageHeartRate], [0, 0])
        let full = try PolarBroadcastDecoder.decodeHeartRateBlock([0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual([full.fastAverageHeartRate, full.slowAverageHeartRate], [255, 255])
        // "fastAvg255SlowMissing": the 3-byte form reports its one value as both averages.
        let legacy = try PolarBroadcastDecoder.decodeHeartRateBlock([0xFF, 0xFF, 0xFF])
        XCTAssertEqual([legacy.fastAverageHeartRate, legacy.slowAverageHeartRate], [255, 255])
        XCTAssertTrue(legacy.isLegacy)
        for length in 0..<3 {
            XCTAssertThrowsError(try PolarBroadcastDecoder.decodeHeartRateBlock(Array(repeating: 0xFF, count: length)))
        }
    }

    /// The frame-counter rule of the same test ("test frame counter"): a value is new when the
    /// counter differs from the previous advertisement's, including after a wrap from 7 to 0.
    func testFrameCounterRule() throws {
        var tracker = PolarFrameTracker()
        let sequence: [(UInt8, Bool)] = [(0xE3, true), (0xE7, true), (0xE7, false), (0xE7, false), (0xFF, true), (0xE3, true)]
        for (status, isNew) in sequence {
            let block = try PolarBroadcastDecoder.decodeHeartRateBlock([status, 0xFE, 0xFE, 0xFE])
            XCTAssertEqual(tracker.isNew(block), isNew, "status 0x\(String(status, radix: 16))")
        }
        // "test reset to defaults": after the strap was lost, its first value is new again.
        tracker.reset()
        XCTAssertTrue(tracker.isNew(try PolarBroadcastDecoder.decodeHeartRateBlock([0xE3, 0xFE, 0xFE, 0xFE])))
    }

    func testDecodeCommandJSON() throws {
        let decoder = BroadcastPayloadDecoders.polarBroadcast
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Wrapped(try decoder.decode([0x2B, 0x0B, 0xB6, 0xAC]))))
        let fields = try XCTUnwrap(object as? [String: Any])
        XCTAssertEqual(fields["heartRate"] as? Int, 172)
        XCTAssertEqual(fields["fastAverageHeartRate"] as? Int, 182)
        XCTAssertEqual(fields["sensorContact"] as? Bool, true)
        XCTAssertEqual(fields["batteryOk"] as? Bool, true)
        XCTAssertEqual(fields["frameCounter"] as? Int, 2)
        let none = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Wrapped(try decoder.decode(Self.vectors[0].bytes))))
        let empty = try XCTUnwrap(none as? [String: Any])
        XCTAssertEqual(Set(empty.keys), ["heartRate", "fastAverageHeartRate", "sensorContact", "batteryOk", "frameCounter"])
        XCTAssertTrue(empty.values.allSatisfy { $0 is NSNull })
    }

    static func expected(_ block: PolarHeartRateBlock) -> Expected {
        Expected(
            slow: block.slowAverageHeartRate, fast: block.fastAverageHeartRate, counter: block.frameCounter,
            contact: block.sensorContact, batteryOk: block.batteryOk, legacy: block.isLegacy)
    }
}

/// An existential decoder output, encodable.
struct Wrapped: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

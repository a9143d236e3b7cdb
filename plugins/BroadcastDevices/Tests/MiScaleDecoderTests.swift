import BroadcastDevices
import Foundation
import SampleBus
import XCTest

/// Xiaomi's scale service data against published vectors, each cited, in every truncation.
final class MiScaleDecoderTests: XCTestCase {
    struct Vector {
        let source: String
        let service: MiScaleService
        let bytes: [UInt8]
        let weight: Double
        let stabilized: Bool
        let removed: Bool
        let impedance: Int?
        let timestamp: String?
    }

    static let vectors: [Vector] = [
        // Home Assistant's xiaomi-ble, tests/test_parser.py (commit 509f516e), test_Xiaomi_Scale1:
        // b"\x22\x9e\x43\xe5\x07\x04\x0b\x10\x13\x01" is 86.55 kg, stabilised.
        Vector(
            source: "xiaomi-ble test_Xiaomi_Scale1", service: .weightScale,
            bytes: [0x22, 0x9E, 0x43, 0xE5, 0x07, 0x04, 0x0B, 0x10, 0x13, 0x01], weight: 86.55, stabilized: true,
            removed: false, impedance: nil, timestamp: "2021-04-11T16:19:01"),
        // Ibid., test_Xiaomi_Scale1_mass_removed: b"\xa2 D\xb2\x07\x01\x01\n\x1a\x15", 87.2 kg, stepped off;
        // the scale's clock was never set (1970-01-01).
        Vector(
            source: "xiaomi-ble test_Xiaomi_Scale1_mass_removed", service: .weightScale,
            bytes: [0xA2, 0x20, 0x44, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x15], weight: 87.2, stabilized: true,
            removed: true, impedance: nil, timestamp: nil),
        // Ibid., test_Xiaomi_Scale1_non_stabilized: b"\x82\x14\x00\xe5\x07\x04\x0b\x10\x17\x08", 0.1 kg.
        Vector(
            source: "xiaomi-ble test_Xiaomi_Scale1_non_stabilized", service: .weightScale,
            bytes: [0x82, 0x14, 0x00, 0xE5, 0x07, 0x04, 0x0B, 0x10, 0x17, 0x08], weight: 0.1, stabilized: false,
            removed: true, impedance: nil, timestamp: "2021-04-11T16:23:08"),
        // A user's capture, sputnikdev/eclipse-smarthome-bluetooth-binding issue 42 (0x181D):
        // [a2, 4c, 63, e2, 07, 02, 01, 0f, 2f, 1c] read 127.100 on the scale.
        Vector(
            source: "eclipse-smarthome-bluetooth-binding issue 42", service: .weightScale,
            bytes: [0xA2, 0x4C, 0x63, 0xE2, 0x07, 0x02, 0x01, 0x0F, 0x2F, 0x1C], weight: 127.1, stabilized: true,
            removed: true, impedance: nil, timestamp: "2018-02-01T15:47:28"),
        // A user's capture, custom-components/ble_monitor issue 292 (0x181D, service data after 1d18):
        // 028642b20701010a1a29 logged as 85.15 kg.
        Vector(
            source: "ble_monitor issue 292", service: .weightScale,
            bytes: [0x02, 0x86, 0x42, 0xB2, 0x07, 0x01, 0x01, 0x0A, 0x1A, 0x29], weight: 85.15, stabilized: false,
            removed: false, impedance: nil, timestamp: nil),
        // xiaomi-ble tests/test_parser.py, test_Xiaomi_Scale2: b"\x02&\xb2\x07\x05\x04\x0f\x02\x01\xac\x01\x86B",
        // 85.15 kg with an impedance of 428 ohms, stabilised.
        Vector(
            source: "xiaomi-ble test_Xiaomi_Scale2", service: .bodyComposition,
            bytes: [0x02, 0x26, 0xB2, 0x07, 0x05, 0x04, 0x0F, 0x02, 0x01, 0xAC, 0x01, 0x86, 0x42], weight: 85.15,
            stabilized: true, removed: false, impedance: 428, timestamp: nil),
        // Ibid., test_Xiaomi_Scale2_non_stabilized: b"\x02\x04\xb2\x07\x01\x01\x12\x10\x1a\x00\x00\xa8R", 105.8 kg.
        Vector(
            source: "xiaomi-ble test_Xiaomi_Scale2_non_stabilized", service: .bodyComposition,
            bytes: [0x02, 0x04, 0xB2, 0x07, 0x01, 0x01, 0x12, 0x10, 0x1A, 0x00, 0x00, 0xA8, 0x52], weight: 105.8,
            stabilized: false, removed: false, impedance: nil, timestamp: nil),
    ]

    func testPublishedPayloads() throws {
        for vector in Self.vectors {
            let reading = try MiScaleDecoder.decode(vector.bytes, service: vector.service)
            XCTAssertEqual(reading.weightKilograms, vector.weight, accuracy: 0.0005, vector.source)
            XCTAssertEqual(reading.unit, .kilogram, vector.source)
            XCTAssertEqual(reading.stabilized, vector.stabilized, vector.source)
            XCTAssertEqual(reading.loadRemoved, vector.removed, vector.source)
            XCTAssertEqual(reading.impedance, vector.impedance, vector.source)
            XCTAssertEqual(reading.clock.iso8601, vector.timestamp, vector.source)
        }
    }

    /// Every prefix of every vector throws `truncated`; one byte more throws `unexpectedLength`.
    func testEveryTruncation() {
        for vector in Self.vectors {
            for length in 0..<vector.bytes.count {
                XCTAssertThrowsError(try MiScaleDecoder.decode(Array(vector.bytes.prefix(length)), service: vector.service)) {
                    XCTAssertEqual(($0 as? AdvertisementDecodingError)?.code, .truncated, "\(vector.source) at \(length)")
                }
            }
            XCTAssertThrowsError(try MiScaleDecoder.decode(vector.bytes + [0], service: vector.service)) {
                XCTAssertEqual(($0 as? AdvertisementDecodingError)?.code, .unexpectedLength, vector.source)
            }
        }
    }

    /// The unit flags. No published capture in pounds or jin was found, so these payloads are
    /// the first vector with its unit bit set and the weight field read by the layout xiaomi-ble
    /// parses (lb × 100, jin × 100; a jin is 0.5 kg, a pound 0.45359237 kg).
    func testUnitFlags() throws {
        var pounds: [UInt8] = [0x23, 0x5E, 0x4A, 0xE5, 0x07, 0x04, 0x0B, 0x10, 0x13, 0x01]  // 19038 → 190.38 lb
        var reading = try MiScaleDecoder.decode(pounds, service: .weightScale)
        XCTAssertEqual(reading.unit, .pound)
        XCTAssertEqual(reading.weightKilograms, 86.355, accuracy: 0.0005)
        pounds[0] = 0x32  // bit 4: jin; 19038 → 190.38 jin
        reading = try MiScaleDecoder.decode(pounds, service: .weightScale)
        XCTAssertEqual(reading.unit, .jin)
        XCTAssertEqual(reading.weightKilograms, 95.19, accuracy: 0.0005)
        // 0x181B: the pound flag is bit 0 of the first control byte, the jin flag bit 6 of the second.
        var composition: [UInt8] = [0x03, 0x26, 0xB2, 0x07, 0x05, 0x04, 0x0F, 0x02, 0x01, 0xAC, 0x01, 0x5E, 0x4A]
        XCTAssertEqual(try MiScaleDecoder.decode(composition, service: .bodyComposition).unit, .pound)
        composition[0] = 0x02
        composition[1] = 0x66
        reading = try MiScaleDecoder.decode(composition, service: .bodyComposition)
        XCTAssertEqual(reading.unit, .jin)
        XCTAssertEqual(reading.weightKilograms, 95.19, accuracy: 0.0005)
    }

    func testDecodeCommandJSON() throws {
        let decoder = BroadcastPayloadDecoders.miScale
        let output = try decoder.decode(Self.vectors[5].bytes, options: ["service": "181b"])
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: JSONEncoder().encode(Wrapped(output))) as? [String: Any])
        XCTAssertEqual(fields["weight"] as? Double, 85.15)
        XCTAssertEqual(fields["unit"] as? String, "kg")
        XCTAssertEqual(fields["stabilized"] as? Bool, true)
        XCTAssertEqual(fields["loadRemoved"] as? Bool, false)
        XCTAssertEqual(fields["impedance"] as? Int, 428)
        XCTAssertTrue(fields["timestamp"] is NSNull)
        XCTAssertEqual(decoder.options.map(\.name), ["service"])
    }
}

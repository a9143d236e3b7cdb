import BLEProfileKit
import BLETesting
import ContinuousGlucose
import Foundation
import GATTDecoding
import GatewayRuntime
import GatewayTesting
import HealthModel
import SampleBus
import XCTest

/// Every `healthgate decode` decoder of the profile against the published payloads in
/// Fixtures/ (`<decoder name>.json`): the valid ones print the expected JSON, the malformed ones
/// throw the expected error.
final class DecoderFixtureTests: XCTestCase {
    typealias FixtureFile = GATTFixtureFile<JSONValue>

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    func testEveryDecoderWithAFixtureFile() throws {
        var checked: [String] = []
        for decoder in CGMProfile.payloadDecoders {
            let name = "\(decoder.name).json"
            guard FileManager.default.fileExists(atPath: Self.fixtures.appendingPathComponent(name).path) else { continue }
            let file = try FixtureFile.load(name, from: Self.fixtures)
            XCTAssertFalse(file.invalid.isEmpty, name)
            for fixture in file.valid {
                let printed = try JSONEncoder().encode(AnyEncodable(try decoder.decode(fixture.bytes)))
                XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: printed), fixture.expected, "\(name): \(fixture.name)")
            }
            for fixture in file.invalid {
                XCTAssertThrowsError(try decoder.decode(fixture.bytes), fixture.name) { error in
                    guard let error = error as? CGMDecodingError else { return XCTFail("\(fixture.name): \(error)") }
                    XCTAssertEqual(FixtureFile.ExpectedError(error), fixture.error, fixture.name)
                    XCTAssertEqual(error.characteristic.rawValue, file.characteristic, fixture.name)
                }
            }
            checked.append(decoder.name)
        }
        XCTAssertEqual(
            Set(checked), ["cgm-measurement", "cgm-feature", "cgm-status", "cgm-session-start-time"],
            "every decoder with published vectors has its fixture file")
    }

    /// Each decoder's help example decodes.
    func testEveryExampleDecodes() throws {
        for decoder in CGMProfile.payloadDecoders {
            let hex = try XCTUnwrap(decoder.example.split(separator: " ").last)
            XCTAssertNoThrow(try decoder.decode(hexBytes(String(hex))), decoder.name)
        }
    }

    /// CRC-16/MCRF4XX's check value from the catalogue of parametrised CRC algorithms (reveng):
    /// the CRC of the ASCII "123456789" is 0x6F91; and the CRC a control point write carries
    /// is the CRC of what precedes it, least significant octet first.
    func testE2ECRCIsMCRF4XX() {
        XCTAssertEqual(E2ECRC.compute(Array("123456789".utf8)), 0x6F91)
        XCTAssertEqual(E2ECRC.compute([UInt8]()), 0xFFFF)
        let written = CGMControlPoint.Request.startSession.value(e2e: true)
        XCTAssertEqual(written.count, 3)
        XCTAssertEqual(E2EVerdict(sent: UInt16(written[1]) | UInt16(written[2]) << 8, over: written.prefix(1)), .valid)
        XCTAssertEqual(CGMControlPoint.Request.setCommunicationInterval(minutes: 5).value(e2e: false), [0x01, 0x05])
        XCTAssertEqual(CGMControlPoint.Request.stopSession.value(e2e: false), [0x1B])
    }

    /// Sizes that cannot be: below the six octets every record has (0 would never advance), and
    /// one octet more than the fields (neither without nor with the two-octet CRC).
    func testImpossibleSizesAreErrors() {
        for (hex, code, field) in [
            ("00000C100600", "valueOutOfRange", "size"), ("05000C1006", "valueOutOfRange", "size"),
            ("07000C10060000", "unexpectedLength", "size"), ("", "truncated", "size"),
            ("06000C1006000900", "truncated", "record"),
        ] {
            XCTAssertThrowsError(try CGMMeasurementDecoder.decode(hexBytes(hex)), hex) { error in
                let error = error as? CGMDecodingError
                XCTAssertEqual(error?.code.rawValue, code, hex)
                XCTAssertEqual(error?.field, field, hex)
            }
        }
        // The error's offset is the second record's, counted from the notification's start.
        XCTAssertThrowsError(try CGMMeasurementDecoder.decode(hexBytes("06000C100600" + "07000C10060000"))) { error in
            XCTAssertEqual((error as? CGMDecodingError)?.offset, 12)
        }
    }

    /// A special value of the concentration is no sample; trend and quality special values are
    /// left out of the metadata.
    func testSpecialValuesAreNeverStored() throws {
        let device = Device(name: "CGM", localIdentifier: "C0:FF:EE:18:1F:01")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        // NaN concentration.
        let nan = try XCTUnwrap(try CGMMeasurementDecoder.decode(hexBytes("0600FF070500")).first)
        XCTAssertNil(try CGMRecordMapper.sample(nan, sessionStart: start, device: device, sensor: "s"))
        // 98 mg/dL, trend NRes, quality +INFINITY.
        let record = try XCTUnwrap(try CGMMeasurementDecoder.decode(hexBytes("0A03620005000008FE07")).first)
        XCTAssertEqual(record.trend, .notAtThisResolution)
        let sample = try XCTUnwrap(try CGMRecordMapper.sample(record, sessionStart: start, device: device, sensor: "s"))
        XCTAssertEqual(sample.quantity.value, 98)
        XCTAssertEqual(sample.startDate, start.addingTimeInterval(300))
        XCTAssertNil(sample.metadata[.cgmTrend])
        XCTAssertNil(sample.metadata[.cgmQuality])
        XCTAssertEqual(sample.metadata.syncIdentifier, "s/cgm/1800000000/5")
    }
}

/// Encodes whatever a decoder returned.
struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

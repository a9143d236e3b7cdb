import GATTDecoding
import XCTest

/// IEEE 11073-20601 SFLOAT and FLOAT, with their special values (IEEE 11073-20601 §F.8; the
/// values the Bluetooth SIG's Personal Health Devices Transcoding white paper lists).
final class MedicalFloatTests: XCTestCase {
    func testSFLOATValues() {
        let rows: [(UInt16, Double)] = [
            (0x008A, 138), (0xF0BD, 18.9), (0x000B, 11), (0xF09F, 15.9), (0x0000, 0),
            (0x0FFF, -1), (0xF800, -204.8), (0x07FD, 2045), (0x1001, 10), (0x7001, 10_000_000), (0x8001, 1e-8),
            (0xE3E8, 10), (0x2002, 200),
        ]
        for (raw, expected) in rows {
            XCTAssertEqual(MedicalFloat.sfloat(raw).number ?? .nan, expected, accuracy: abs(expected) * 1e-12,
                           String(raw, radix: 16))
        }
    }

    func testSFLOATSpecialValuesAreNeverNumbers() {
        let rows: [(UInt16, MedicalFloat)] = [
            (0x07FF, .notANumber), (0x0800, .notAtThisResolution), (0x07FE, .positiveInfinity),
            (0x0802, .negativeInfinity), (0x0801, .reserved),
        ]
        for (raw, expected) in rows {
            XCTAssertEqual(MedicalFloat.sfloat(raw), expected, String(raw, radix: 16))
            XCTAssertNil(MedicalFloat.sfloat(raw).number)
        }
        XCTAssertEqual("\(MedicalFloat.sfloat(0x07FF))", "NaN")
        XCTAssertEqual("\(MedicalFloat.sfloat(0x0800))", "NRes")
    }

    func testFLOATValuesAndSpecialValues() {
        XCTAssertEqual(MedicalFloat.float(0xFE00_0EB0), .value(37.6), "the thermometer vector: 3760 × 10^-2")
        XCTAssertEqual(MedicalFloat.float(0xFF00_0173).number ?? 0, 37.1, accuracy: 1e-12)
        XCTAssertEqual(MedicalFloat.float(0x00FF_FFFF), .value(-1))
        XCTAssertEqual(MedicalFloat.float(0x0200_0001), .value(100))
        let rows: [(UInt32, MedicalFloat)] = [
            (0x007F_FFFF, .notANumber), (0x0080_0000, .notAtThisResolution), (0x007F_FFFE, .positiveInfinity),
            (0x0080_0002, .negativeInfinity), (0x0080_0001, .reserved),
        ]
        for (raw, expected) in rows {
            XCTAssertEqual(MedicalFloat.float(raw), expected, String(raw, radix: 16))
            XCTAssertNil(MedicalFloat.float(raw).number)
        }
    }
}

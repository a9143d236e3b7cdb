import Foundation
import HealthModel
import WorkoutExport
import XCTest

/// The FIT writer's framing: CRC-16/ARC's catalogue check value, the 14-byte header with its CRC
/// and data size, a definition written once per layout, and invalid values for absent fields.
/// (Whole files are read back by fitdecode in EndToEndTests' WorkoutExportTests.)
final class FITWriterTests: XCTestCase {
    func testCRCHeaderAndDefinitions() {
        XCTAssertEqual(FITWriter.crc(Array("123456789".utf8)), 0xBB3D, "CRC-16/ARC check value")
        var writer = FITWriter()
        writer.message(20, [.init(253, .uint32, 1), .init(3, .uint8, 150)])
        writer.message(20, [.init(253, .uint32, 2), .init(3, .uint8, nil)])
        let file = writer.file()
        XCTAssertEqual(Array(file[0..<2]), [14, 0x20])
        XCTAssertEqual(Array(file[8..<12]), Array(".FIT".utf8))
        let dataSize = Int(file[4]) | Int(file[5]) << 8 | Int(file[6]) << 16 | Int(file[7]) << 24
        // One definition (6 + 2 × 3 bytes) and two data messages (1 + 4 + 1 bytes each).
        XCTAssertEqual(dataSize, 12 + 2 * 6)
        XCTAssertEqual(file.count, 14 + dataSize + 2)
        XCTAssertEqual(FITWriter.crc(file[0..<12]), UInt16(file[12]) | UInt16(file[13]) << 8)
        XCTAssertEqual(FITWriter.crc(file), 0, "a file's CRC over everything, its own CRC included, is 0")
        XCTAssertEqual(file[14], 0x40, "a definition of local type 0")
        XCTAssertEqual(Array(file[32..<38]), [0, 2, 0, 0, 0, 0xFF], "the second record: timestamp 2, heart rate invalid")
    }

    func testDatesCountFromFITsEpoch() {
        let workout = Workout(
            id: SampleIDGenerator(seed: 1).next(), activityType: .running, startDate: Date(timeIntervalSince1970: 631_065_600 + 1000),
            endDate: Date(timeIntervalSince1970: 631_065_600 + 1060), duration: 60)
        let file = FITActivity.encode(workout, samples: [])
        XCTAssertEqual(FITWriter.crc(file), 0)
        // file_id's time_created (its last field) is 1000 s after 1989-12-31T00:00:00Z.
        let definitionSize = 6 + 5 * 3
        let timeCreated = Array(file[(14 + definitionSize + 1 + 1 + 2 + 2 + 4)...].prefix(4))
        XCTAssertEqual(timeCreated, [0xE8, 0x03, 0, 0])
    }
}

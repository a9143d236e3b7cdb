import Foundation
import HealthModel
import Synchronization
import XCTest

final class SampleIDTests: XCTestCase {
    func testVersionAndVariantBits() {
        let generator = SampleIDGenerator()
        for _ in 0..<10_000 {
            let id = generator.next()
            XCTAssertEqual(id.version, 7)
            XCTAssertEqual(id.bytes[6] >> 4, 7, "version nibble, RFC 9562 §5.7")
            XCTAssertEqual(id.bytes[8] >> 6, 0b10, "variant bits, RFC 9562 §4.1")
        }
    }

    func testTimestampIsTheClockInMilliseconds() {
        let generator = SampleIDGenerator(seed: 1, milliseconds: { 1_800_000_000_123 })
        let id = generator.next()
        XCTAssertEqual(id.unixMilliseconds, 1_800_000_000_123)
        XCTAssertEqual(id.uuidString.prefix(13), "01a3185c-507b", "48-bit big-endian timestamp first")
    }

    func testStrictlyIncreasingOverAHundredThousandIDs() {
        let generator = SampleIDGenerator()
        var previous = generator.next()
        for _ in 0..<100_000 {
            let id = generator.next()
            XCTAssertLessThan(previous, id)
            XCTAssertLessThan(previous.uuidString, id.uuidString, "string order is creation order too")
            previous = id
        }
    }

    /// A frozen clock forces more than 4096 identifiers into one millisecond: the 12-bit counter
    /// overflows into the timestamp (RFC 9562 §6.2 method 1) and order still holds.
    func testStrictlyIncreasingWithAFixedClock() {
        let generator = SampleIDGenerator(seed: 99, milliseconds: { 1_800_000_000_000 })
        var previous = generator.next()
        var seen = Set([previous])
        for _ in 0..<100_000 {
            let id = generator.next()
            XCTAssertLessThan(previous, id)
            XCTAssertEqual(id.version, 7)
            seen.insert(id)
            previous = id
        }
        XCTAssertEqual(seen.count, 100_001)
        // 100k identifiers need at least 100_001 / 4096 ≈ 25 milliseconds of counter space.
        XCTAssertGreaterThanOrEqual(previous.unixMilliseconds, 1_800_000_000_000 + 24)
        XCTAssertLessThanOrEqual(previous.unixMilliseconds, 1_800_000_000_000 + 25)
    }

    /// When the clock catches up after the counter ran ahead, order still holds; a clock that
    /// steps backwards does not break it either.
    func testOrderSurvivesAClockThatStepsBackAndForth() {
        let now = Mutex<UInt64>(1_800_000_000_000)
        let generator = SampleIDGenerator(seed: 5, milliseconds: { now.withLock { $0 } })
        var previous = generator.next()
        for step in 0..<20_000 {
            now.withLock { value in
                // Mostly frozen, sometimes a step forward, sometimes one back.
                if step % 997 == 0 { value += 1 }
                if step % 1_499 == 0 { value -= 3 }
            }
            let id = generator.next()
            XCTAssertLessThan(previous, id)
            previous = id
        }
    }

    func testConcurrentCallersGetUniqueIDs() async {
        let generator = SampleIDGenerator()
        let batches = await withTaskGroup(of: [SampleID].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<5_000).map { _ in generator.next() } }
            }
            var all: [[SampleID]] = []
            for await batch in group { all.append(batch) }
            return all
        }
        for batch in batches {
            XCTAssertEqual(batch, batch.sorted(), "each caller sees increasing identifiers")
        }
        XCTAssertEqual(Set(batches.joined()).count, 40_000)
    }

    func testSeededGeneratorsAreReproducible() {
        let a = SampleIDGenerator(seed: 42, milliseconds: { 1_800_000_000_000 })
        let b = SampleIDGenerator(seed: 42, milliseconds: { 1_800_000_000_000 })
        XCTAssertEqual((0..<100).map { _ in a.next() }, (0..<100).map { _ in b.next() })
    }

    func testStringRoundTrip() {
        let generator = SampleIDGenerator()
        for _ in 0..<1_000 {
            let id = generator.next()
            XCTAssertEqual(id.uuidString.count, 36)
            XCTAssertEqual(id.uuidString, id.uuidString.lowercased())
            XCTAssertEqual(SampleID(string: id.uuidString), id)
            XCTAssertEqual(SampleID(string: id.uuidString.uppercased()), id)
            XCTAssertEqual(id.description, id.uuidString)
        }
    }

    func testBytesRoundTrip() {
        let generator = SampleIDGenerator()
        for _ in 0..<1_000 {
            let id = generator.next()
            XCTAssertEqual(id.bytes.count, 16)
            XCTAssertEqual(SampleID(bytes: id.bytes), id)
            XCTAssertEqual(SampleID(bytes: id.bytes[...]), id, "any collection of bytes")
        }
        let fixed = SampleID(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
        XCTAssertEqual(
            fixed.bytes,
            [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10])
        XCTAssertEqual(fixed.uuidString, "01234567-89ab-cdef-fedc-ba9876543210")
        XCTAssertEqual(fixed.uuidString(after: "quantity-series:"), "quantity-series:01234567-89ab-cdef-fedc-ba9876543210")
        XCTAssertEqual(fixed.uuidString(after: "série·"), "série·01234567-89ab-cdef-fedc-ba9876543210", "a prefix of several-byte characters")
        XCTAssertNil(SampleID(bytes: [UInt8](repeating: 0, count: 15)))
        XCTAssertNil(SampleID(bytes: [UInt8](repeating: 0, count: 17)))
        XCTAssertNil(SampleID(bytes: [UInt8]()))
    }

    func testParseRejectsMalformedStrings() {
        let bad = [
            "",
            "01234567-89ab-cdef-fedc-ba987654321",  // 35 characters
            "01234567-89ab-cdef-fedc-ba98765432100",  // 37 characters
            "0123456789abcdeffedcba9876543210",  // no hyphens
            "01234567_89ab_cdef_fedc_ba9876543210",  // wrong separators
            "0123456-789ab-cdef-fedc-ba9876543210",  // hyphen in the wrong place
            "01234567-89ab-cdef-fedc-ba987654321g",  // not hex
            "{01234567-89ab-cdef-fedc-ba98765432}",  // braces
            "01234567-89ab-cdef-fedc-ba987654321\u{e9}",  // 36 characters, 37 bytes
        ]
        for text in bad {
            XCTAssertNil(SampleID(string: text), text)
            XCTAssertNil(UUID(uuidString: text), "Foundation agrees: \(text)")
        }
        // Foundation on Linux reads each byte with sscanf's %2hhx, which skips a leading space and
        // takes "-0" as a number. SampleID accepts only the canonical form.
        for text in [" 1234567-89ab-cdef-fedc-ba9876543210", "01234567-89ab-cdef-fedc-ba98765432-0"] {
            XCTAssertNil(SampleID(string: text), text)
        }
    }

    /// SampleID's parser and formatter agree with Foundation's, byte for byte.
    func testMatchesFoundationUUID() {
        let generator = SampleIDGenerator()
        for _ in 0..<1_000 {
            let id = generator.next()
            let uuid = UUID(uuidString: id.uuidString)
            XCTAssertEqual(uuid, id.uuid)
            XCTAssertEqual(id.uuid.uuidString, id.uuidString.uppercased())
            XCTAssertEqual(uuid.map(SampleID.init), id)
        }
        for _ in 0..<1_000 {
            let uuid = UUID()
            let id = SampleID(uuid)
            XCTAssertEqual(id.uuidString, uuid.uuidString.lowercased())
            XCTAssertEqual(SampleID(string: uuid.uuidString), id)
            XCTAssertEqual(id.uuid, uuid)
            XCTAssertEqual(id.version, 4)
        }
    }

    func testCodesAsAString() throws {
        let id = SampleID(high: 0x0190_0000_0000_7abc, low: 0x8000_0000_0000_0001)
        let data = try JSONEncoder().encode([id])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"["01900000-0000-7abc-8000-000000000001"]"#)
        XCTAssertEqual(try JSONDecoder().decode([SampleID].self, from: data), [id])
        XCTAssertThrowsError(try JSONDecoder().decode([SampleID].self, from: Data(#"["nope"]"#.utf8))) {
            guard case .dataCorrupted(let context)? = $0 as? DecodingError else { return XCTFail("\($0)") }
            XCTAssertEqual(context.debugDescription, "not a UUID: nope")
        }
    }
}

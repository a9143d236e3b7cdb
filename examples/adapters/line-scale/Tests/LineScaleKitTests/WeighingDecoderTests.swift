import LineScaleKit
import XCTest

final class WeighingDecoderTests: XCTestCase {
    private func decode(_ line: String) throws(WeighingLineError) -> Weighing {
        try WeighingDecoder.decode(Array(line.utf8))
    }

    private func assertFails(_ line: String, _ code: WeighingLineError.Code, file: StaticString = #filePath, line number: UInt = #line) {
        do {
            let weighing = try decode(line)
            XCTFail("decoded \(weighing) from \(line)", file: file, line: number)
        } catch {
            XCTAssertEqual(error.code, code, "\(line)", file: file, line: number)
        }
    }

    func testStableGrossInKilograms() throws {
        let weighing = try decode("2026-11-30T08:15:02Z ST,GS,+0072.45kg")
        XCTAssertEqual(weighing, Weighing(date: "2026-11-30T08:15:02Z", stability: .stable, kind: .gross, value: 72.45, unit: .kilogram))
    }

    func testUnstableNetInPounds() throws {
        let weighing = try decode("2026-11-29T19:12:05+01:00 US,NT,+0159.70lb")
        XCTAssertEqual(weighing, Weighing(date: "2026-11-29T19:12:05+01:00", stability: .unstable, kind: .net, value: 159.7, unit: .pound))
    }

    func testOverloadIsAnErrorWhateverItsWeight() {
        assertFails("2026-11-30T08:15:02Z OL,GS,+9999.99kg", .overload)
        assertFails("2026-11-30T08:15:02Z OL,GS,-------", .overload)
    }

    func testSign() throws {
        XCTAssertEqual(try decode("2026-11-30T08:15:02Z ST,NT,-0001.20kg").value, -1.2)
        XCTAssertEqual(try decode("2026-11-30T08:15:02Z ST,NT,+0001.20kg").value, 1.2)
        let zero = try decode("2026-11-30T08:15:02Z ST,GS,-0000.00kg").value
        XCTAssertEqual(zero, 0)
        XCTAssertEqual(zero.sign, .plus, "-0000.00 is 0, not -0")
        assertFails("2026-11-30T08:15:02Z ST,GS,0072.45kg", .badWeight)
        assertFails("2026-11-30T08:15:02Z ST,GS,±0072.45kg", .notText)
    }

    func testWeightForms() throws {
        XCTAssertEqual(try decode("2026-11-30T08:15:02Z ST,GS,+72kg").value, 72)
        XCTAssertEqual(try decode("2026-11-30T08:15:02Z ST,GS,+72.kg").value, 72)
        // A&D pads the unit to three characters.
        XCTAssertEqual(try decode("2026-11-30T08:15:02Z ST,GS,+0072.45 kg").unit, .kilogram)
        assertFails("2026-11-30T08:15:02Z ST,GS,+kg", .badWeight)
        assertFails("2026-11-30T08:15:02Z ST,GS,+.kg", .badWeight)
        assertFails("2026-11-30T08:15:02Z ST,GS,+72.4.5kg", .badWeight)
        assertFails("2026-11-30T08:15:02Z ST,GS,+0000000000072.45kg", .badWeight)
        assertFails("2026-11-30T08:15:02Z ST,GS,+ 72.45kg", .badWeight)
    }

    func testUnits() {
        assertFails("2026-11-30T08:15:02Z ST,GS,+0072.45g", .unknownUnit)
        assertFails("2026-11-30T08:15:02Z ST,GS,+0072.45KG", .unknownUnit)
        assertFails("2026-11-30T08:15:02Z ST,GS,+0072.45", .unknownUnit)
        assertFails("2026-11-30T08:15:02Z ST,GS,+0072.45kgs", .unknownUnit)
    }

    func testHeaderAndKind() {
        assertFails("2026-11-30T08:15:02Z QT,GS,+0072.45kg", .unknownHeader)
        assertFails("2026-11-30T08:15:02Z st,GS,+0072.45kg", .unknownHeader)
        assertFails("2026-11-30T08:15:02Z ST,TR,+0072.45kg", .unknownKind)
    }

    func testFields() {
        assertFails("2026-11-30T08:15:02Z ST,+0072.45kg", .notThreeFields)
        assertFails("2026-11-30T08:15:02Z ST,GS,+0072.45kg,", .notThreeFields)
        assertFails("2026-11-30T08:15:02ZST,GS,+0072.45kg", .notThreeFields)
        assertFails("ST,GS,+0072.45kg", .notThreeFields)
        assertFails("hello", .notThreeFields)
    }

    func testDates() throws {
        XCTAssertEqual(try decode("2026-11-30t08:15:02z ST,GS,+0072.45kg").date, "2026-11-30t08:15:02z")
        XCTAssertEqual(try decode("2026-11-30T08:15:02.123456789-05:30 ST,GS,+0072.45kg").date, "2026-11-30T08:15:02.123456789-05:30")
        XCTAssertEqual(try decode("2028-02-29T08:15:02Z ST,GS,+0072.45kg").date, "2028-02-29T08:15:02Z", "a leap day")
        for date in [
            "2026-11-30T08:15:02", "2026-11-30 08:15:02Z", "2026-11-30T08:15Z", "2026-13-30T08:15:02Z", "2026-02-29T08:15:02Z",
            "2026-11-31T08:15:02Z", "2026-11-30T24:00:00Z", "2026-11-30T08:60:00Z", "2026-11-30T08:15:02.Z",
            "2026-11-30T08:15:02.1234567890Z", "2026-11-30T08:15:02+0100", "2026-11-30T08:15:02+24:00", "26-11-30T08:15:02Z",
            "2026-11-30T08:15:02Zx",
        ] {
            assertFails("\(date) ST,GS,+0072.45kg", .badDate)
        }
    }

    func testWhiteSpaceAndLineEndings() throws {
        let expected = try decode("2026-11-30T08:15:02Z ST,GS,+0072.45kg")
        XCTAssertEqual(try decode("2026-11-30T08:15:02Z ST,GS,+0072.45kg\r"), expected, "CRLF")
        XCTAssertEqual(try decode("  2026-11-30T08:15:02Z  ST,GS,+0072.45kg \t\r"), expected)
        assertFails("", .blank)
        assertFails("\r", .blank)
        assertFails(" \t ", .blank)
    }

    func testBytesThatAreNoText() {
        do {
            _ = try WeighingDecoder.decode(Array("2026-11-30T08:15:02Z ST,GS,+0072.45kg".utf8) + [0xFF])
            XCTFail("decoded a line with a 0xFF byte")
        } catch {
            XCTAssertEqual(error.code, .notText)
            XCTAssertEqual(error.line, "2026-11-30T08:15:02Z ST,GS,+0072.45kg\\xFF")
        }
        assertFails("2026-11-30T08:15:02Z ST,GS,+0072.45kg\u{0}", .notText)
        assertFails("2026-11-30T08:15:02Z ST,GS,+0072,45kg", .notThreeFields)
    }

    func testAnErrorNamesTheLine() {
        do {
            _ = try decode("2026-11-30T08:15:02Z OL,GS,+9999.99kg\r")
            XCTFail("decoded an overload")
        } catch {
            XCTAssertEqual(error.description, #"overload: the load is over the scale's capacity: "2026-11-30T08:15:02Z OL,GS,+9999.99kg""#)
        }
    }

    func testPrintable() {
        XCTAssertEqual(WeighingDecoder.printable(Array("a\"b\\c\td\re".utf8) + [0x07, 0xC3]), #"a\"b\\c\td\re\x07\xC3"#)
    }
}

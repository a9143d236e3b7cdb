import LineScaleKit
import XCTest

final class LineSplitterTests: XCTestCase {
    private let text = Array("first\r\nsecond\n\nthird line\nunfinished".utf8)

    /// The lines of `bytes` fed in `chunks` (their lengths, the rest at the end).
    private func lines(_ bytes: [UInt8], in chunks: [Int], offset: Int = 0, maxLineBytes: Int = 256) -> (lines: [LineSplitter.Line], splitter: LineSplitter) {
        var splitter = LineSplitter(offset: offset, maxLineBytes: maxLineBytes)
        var lines: [LineSplitter.Line] = []
        var rest = bytes[...]
        for length in chunks {
            lines += splitter.append(rest.prefix(length))
            rest = rest.dropFirst(length)
        }
        lines += splitter.append(rest)
        return (lines, splitter)
    }

    func testLinesAndOffsets() {
        let (lines, splitter) = lines(text, in: [])
        XCTAssertEqual(lines, [
            LineSplitter.Line(bytes: Array("first\r".utf8), start: 0, end: 7),
            LineSplitter.Line(bytes: Array("second".utf8), start: 7, end: 14),
            LineSplitter.Line(bytes: [], start: 14, end: 15),
            LineSplitter.Line(bytes: Array("third line".utf8), start: 15, end: 26),
        ])
        XCTAssertEqual(splitter.consumed, 26, "the unfinished line is not consumed")
        XCTAssertTrue(splitter.hasPartialLine)
        XCTAssertEqual(splitter.partialLine, Array("unfinished".utf8))
    }

    /// As NIO's decoder verifier does: the same lines whatever the chunks, from one byte at a
    /// time to all at once, and every cut in two.
    func testEveryChunking() {
        let whole = lines(text, in: []).lines
        XCTAssertEqual(lines(text, in: Array(repeating: 1, count: text.count)).lines, whole)
        for cut in 0...text.count {
            XCTAssertEqual(lines(text, in: [cut]).lines, whole, "cut at \(cut)")
        }
        for size in 2...8 {
            XCTAssertEqual(lines(text, in: Array(repeating: size, count: text.count / size)).lines, whole, "chunks of \(size)")
        }
    }

    func testStartsAtItsOffset() {
        let (lines, splitter) = lines(Array("a\nb\n".utf8), in: [], offset: 1000)
        XCTAssertEqual(lines.map(\.start), [1000, 1002])
        XCTAssertEqual(lines.map(\.end), [1002, 1004])
        XCTAssertEqual(splitter.consumed, 1004)
        XCTAssertFalse(splitter.hasPartialLine)
    }

    func testALongLineIsCutAndItsBytesStillCounted() {
        let long = Array(repeating: UInt8(ascii: "x"), count: 20)
        let bytes = long + [0x0A] + Array("ok\n".utf8)
        for chunk in [1, 3, 7, bytes.count] {
            let (lines, splitter) = lines(bytes, in: Array(repeating: chunk, count: bytes.count / chunk), maxLineBytes: 8)
            XCTAssertEqual(lines, [
                LineSplitter.Line(bytes: Array(long.prefix(8)), start: 0, end: 21, truncated: true),
                LineSplitter.Line(bytes: Array("ok".utf8), start: 21, end: 24),
            ], "chunks of \(chunk)")
            XCTAssertEqual(splitter.consumed, 24)
        }
        // A line of exactly the bound is whole.
        XCTAssertEqual(lines(Array("12345678\n".utf8), in: [], maxLineBytes: 8).lines.first?.truncated, false)
    }

    func testPartialLineStaysBounded() {
        let (_, splitter) = lines(Array(repeating: UInt8(ascii: "x"), count: 10_000), in: [1000, 1000], maxLineBytes: 16)
        XCTAssertEqual(splitter.partialLine.count, 16)
        XCTAssertEqual(splitter.consumed, 0)
    }

    func testReset() {
        var splitter = LineSplitter()
        _ = splitter.append(Array("a\nb".utf8))
        splitter.reset(offset: 0)
        XCTAssertEqual(splitter.consumed, 0)
        XCTAssertFalse(splitter.hasPartialLine)
        XCTAssertEqual(splitter.append(Array("c\n".utf8)), [LineSplitter.Line(bytes: [UInt8(ascii: "c")], start: 0, end: 2)])
    }
}

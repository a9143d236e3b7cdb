import SerialDevices
import XCTest

/// The framers every serial family member cuts its byte stream with: the same frames come out
/// whatever the chunking.
final class FramerTests: XCTestCase {
    /// Feeds `input` to a fresh framer in chunks of `size` bytes.
    func frames<F: ByteFramer>(_ make: () -> F, _ input: [UInt8], chunk size: Int) -> [Result<[UInt8], FramingError>] {
        var framer = make()
        var out: [Result<[UInt8], FramingError>] = []
        var start = 0
        while start < input.count {
            let end = min(input.count, start + size)
            out += framer.append(input[start..<end])
            start = end
        }
        return out
    }

    func testLineFramerInEveryChunking() {
        let input = Array("$ST,1*00\r\nnoise-that-is-far-too-long\nID,a,b\n\n".utf8)
        let expected: [Result<[UInt8], FramingError>] = [
            .success(Array("$ST,1*00".utf8)), .failure(.overlong(length: 17, maximum: 16)), .success(Array("ID,a,b".utf8)),
        ]
        for size in 1...input.count {
            XCTAssertEqual(frames({ LineFramer(maximumLength: 16) }, input, chunk: size), expected, "chunk size \(size)")
        }
    }

    func testLineFramerCapsLengthAndResynchronises() {
        var framer = LineFramer(maximumLength: 8)
        let input = Array("12345678\r\n123456789\nabc\n\n\r\nok".utf8)
        var out: [Result<[UInt8], FramingError>] = []
        for byte in input { out += framer.append([byte]) }
        XCTAssertEqual(out, [
            .success(Array("12345678".utf8)),
            .failure(.overlong(length: 9, maximum: 8)),
            .success(Array("abc".utf8)),
        ])
        // "ok" waits for its LF.
        XCTAssertEqual(framer.append(Array("\n".utf8)), [.success(Array("ok".utf8))])
    }

    func testLengthPrefixedFramerInEveryChunking() {
        let input: [UInt8] = [0x00, 0xA5, 0x02, 0x10, 0x20, 0x99, 0xA5, 0x00, 0xA5, 0x01, 0x30, 0xA5, 0xF0]
        let expected: [Result<[UInt8], FramingError>] = [
            .success([0x10, 0x20]), .failure(.badLength(0)), .success([0x30]), .failure(.badLength(0xF0)),
        ]
        for size in 1...input.count {
            XCTAssertEqual(
                frames({ LengthPrefixedFramer(sync: 0xA5, maximumLength: 16) }, input, chunk: size), expected, "chunk size \(size)")
        }
    }
}

import Foundation
import RemoteSinkKit
import XCTest

/// libdeflate, loaded with dlopen: what it compresses is gzip that zlib reads back byte for
/// byte; a missing library is reported once, and the caller falls back to zlib.
final class DeflateLibraryTests: XCTestCase {
    func testLibdeflateWritesGzipThatZlibReadsBack() throws {
        let library = DeflateLibrary()
        try library.load()
        var json: [UInt8] = Array(#"{"correlations":[],"heartbeatSeries":[],"samples":["#.utf8)
        for index in 0..<500 {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += Array(#"{"end":"2026-11-23T14:00:\#(index % 60).000000Z","type":"heartRate","value":\#(60 + index % 90)}"#.utf8)
        }
        json += Array("]}".utf8)
        var noise: [UInt8] = []
        var state: UInt64 = 42
        for _ in 0..<100_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            noise.append(UInt8(truncatingIfNeeded: state >> 56))
        }
        for input in [[], Array("x".utf8), json, noise] {
            for level: Int32 in [1, 6, 12] {
                let compressed = try XCTUnwrap(input.withUnsafeBytes { library.gzip($0, level: level) })
                XCTAssertEqual(Array(compressed.prefix(2)), [0x1F, 0x8B], "not a gzip member")
                XCTAssertEqual(Array(try Gzip.decompress(Data(compressed))), input)
            }
        }
        let compressed = try XCTUnwrap(json.withUnsafeBytes { library.gzip($0) })
        XCTAssertLessThan(compressed.count, json.count / 4)
    }

    func testAMissingLibraryIsReportedAndCompressesNothing() {
        let library = DeflateLibrary(path: "libdeflate-missing.so.0")
        XCTAssertThrowsError(try library.load()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("libdeflate-missing.so.0"), text)
            XCTAssertTrue(text.contains("zlib"), text)
        }
        XCTAssertNil(Array("some body".utf8).withUnsafeBytes { library.gzip($0) })
    }
}

import Foundation
import GatewayTesting
import LinuxSystem
import RemoteSinkKit
import XCTest

/// libdeflate, loaded with dlopen: what it compresses is gzip that zlib reads back byte for
/// byte; a missing or wrong library is a `NativeLibraryError`, reported once and kept, and the
/// caller falls back to zlib.
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

    func testAMissingLibraryIsReportedOnceAndCompressesNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deflate-library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("libdeflate.so.0").path
        let library = DeflateLibrary(path: path)
        var first: NativeLibraryError?
        XCTAssertThrowsError(try library.load()) { error in
            guard let error = error as? NativeLibraryError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.library, path)
            XCTAssertEqual(error.step, .open)
            XCTAssertTrue(error.reason.contains("cannot open shared object file"), error.reason)
            XCTAssertTrue(error.description.hasPrefix("cannot load \(path): "), error.description)
            XCTAssertTrue(error.description.contains("zlib"), error.description)
            XCTAssertTrue(error.description.contains("install libdeflate0"), error.description)
            first = error
        }
        XCTAssertNil(Array("some body".utf8).withUnsafeBytes { library.gzip($0) })

        // The failure is kept: once the library appears at the path, this instance still
        // compresses nothing (no search per batch), while a new one loads it.
        try DeflateLibrary().load()
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: try XCTUnwrap(mappedLibraryPath(containing: "/libdeflate.so.0")))
        XCTAssertThrowsError(try library.load()) { XCTAssertEqual($0 as? NativeLibraryError, first) }
        XCTAssertNil(Array("some body".utf8).withUnsafeBytes { library.gzip($0) })
        XCTAssertNotNil(Array("some body".utf8).withUnsafeBytes { DeflateLibrary(path: path).gzip($0) })
    }

    func testALibraryThatIsNotLibdeflateNamesTheMissingEntryPoint() {
        // zlib opens fine but has no libdeflate_* symbols.
        XCTAssertThrowsError(try DeflateLibrary(path: "libz.so.1").load()) { error in
            guard let error = error as? NativeLibraryError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.step, .resolve(symbol: "libdeflate_alloc_compressor"))
            XCTAssertTrue(error.description.hasPrefix("cannot find libdeflate_alloc_compressor in libz.so.1: "), error.description)
        }
    }
}

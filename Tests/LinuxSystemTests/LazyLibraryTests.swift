import Foundation
import GatewayTesting
import LinuxSystem
import Synchronization
import XCTest

/// The one dlopen(3) loader, on zlib (installed everywhere the gateway runs): a table of C
/// function pointers that the compiler checks is Sendable, called from many tasks at once; each
/// step's failure as a `NativeLibraryError` naming the library, the step and the remedy; a failure
/// retried, a success kept.
final class LazyLibraryTests: XCTestCase {
    /// zlib's entry points: a plain struct of C function pointers, Sendable without `@unchecked`.
    struct ZlibEntryPoints: Sendable {
        let version: @convention(c) () -> UnsafePointer<CChar>?
        let crc32: @convention(c) (UInt, UnsafePointer<UInt8>?, UInt32) -> UInt
        /// A variadic function (gzprintf), resolved as a shim's typed wrapper would take it; the
        /// wrappers that call theirs are exercised by the libcurl and sd-bus suites.
        let variadic: VariadicEntryPoint
    }

    static let remedy = "install zlib1g"

    static func zlib(_ path: String) -> LazyLibrary<ZlibEntryPoints> {
        LazyLibrary(path: path, remedy: remedy) { library throws(NativeLibraryError) in
            ZlibEntryPoints(
                version: try library.resolve("zlibVersion", as: (@convention(c) () -> UnsafePointer<CChar>?).self),
                crc32: try library.resolve("crc32", as: (@convention(c) (UInt, UnsafePointer<UInt8>?, UInt32) -> UInt).self),
                variadic: try library.resolve("gzprintf", as: VariadicEntryPoint.self))
        }
    }

    func testATableOfEntryPointsIsCalledFromManyTasksAtOnce() async throws {
        let library = Self.zlib("libz.so.1")
        XCTAssertNil(library.loadedEntryPoints, "the initializer loaded the library")
        let zlib = try library.entryPoints()
        XCTAssertTrue(try XCTUnwrap(zlib.version().map { String(cString: $0) }).hasPrefix("1."))
        // The table crosses into child tasks; the check value of CRC-32 (ITU-T V.42) for "123456789".
        let checks = await withTaskGroup(of: UInt.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    Array("123456789".utf8).withUnsafeBufferPointer { zlib.crc32(0, $0.baseAddress, UInt32($0.count)) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(checks, Array(repeating: 0xCBF4_3926, count: 8))
        // Kept: the second call hands out the same addresses without loading again.
        let again = try library.entryPoints()
        XCTAssertEqual(unsafeBitCast(again.crc32, to: UnsafeRawPointer.self), unsafeBitCast(zlib.crc32, to: UnsafeRawPointer.self))
        XCTAssertNotNil(library.loadedEntryPoints)
    }

    func testAMissingLibraryIsRetriedAndLoadsOnceItAppears() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lazy-library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("libz.so.1").path
        let library = Self.zlib(path)
        for _ in 0..<2 {
            XCTAssertThrowsError(try library.entryPoints()) { error in
                guard let error = error as? NativeLibraryError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.library, path)
                XCTAssertEqual(error.step, .open)
                XCTAssertTrue(error.reason.contains("cannot open shared object file"), error.reason)
                XCTAssertEqual(error.description, "cannot load \(path): \(error.reason). \(Self.remedy)")
            }
        }
        XCTAssertNil(library.loadedEntryPoints)
        // "Install" it: the path becomes the real zlib, and the next call loads it.
        _ = try Self.zlib("libz.so.1").entryPoints()
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: try XCTUnwrap(mappedLibraryPath(containing: "/libz.so.1")))
        XCTAssertEqual(try library.entryPoints().crc32(0, nil, 0), 0)
    }

    func testALibraryWithoutAnEntryPointNamesIt() {
        // libm opens fine but is not zlib.
        XCTAssertThrowsError(try Self.zlib("libm.so.6").entryPoints()) { error in
            guard let error = error as? NativeLibraryError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.step, .resolve(symbol: "zlibVersion"))
            XCTAssertTrue(error.reason.contains("undefined symbol: zlibVersion"), error.reason)
            XCTAssertTrue(error.description.hasPrefix("cannot find zlibVersion in libm.so.6: "), error.description)
            XCTAssertTrue(error.description.hasSuffix(Self.remedy), error.description)
        }
    }

    func testAFailedInitializationIsReportedAndRetried() {
        let attempts = AttemptCounter()
        let library = LazyLibrary<ZlibEntryPoints>(path: "libz.so.1", remedy: Self.remedy) { library throws(NativeLibraryError) in
            attempts.add()
            throw library.initializationFailed("refused by the test")
        }
        for expected in 1...2 {
            XCTAssertThrowsError(try library.entryPoints()) { error in
                XCTAssertEqual(error as? NativeLibraryError, NativeLibraryError(
                    library: "libz.so.1", step: .initialize, reason: "refused by the test", remedy: Self.remedy))
            }
            XCTAssertEqual(attempts.count, expected)
        }
    }

    /// Counts the calls of a `bind`.
    final class AttemptCounter: Sendable {
        private let value = Mutex(0)
        var count: Int { value.withLock { $0 } }
        func add() { value.withLock { $0 += 1 } }
    }
}

import Foundation
import GatewayTesting
@testable import LinuxSystem
import XCTest

/// `RunMarker` in this process: a run that ends cleanly leaves nothing, one that does not is
/// found by the next with its pid and start, and a crash line is read back. (The fatal-signal
/// handler itself is driven through the built executable, in RunMarkerEndToEndTests.)
final class RunMarkerTests: XCTestCase {
    func testACleanEndLeavesNothingAndAnUncleanOneIsFoundByTheNextRun() throws {
        let directory = try TestEnvironment.temporaryDirectory("run-marker")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("run-marker").path

        let (first, none) = try RunMarker.begin(path: path, pid: 41, startedAt: 1_000)
        XCTAssertNil(none)
        first.end()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))

        do {
            // No end(), as after SIGKILL: the file stays. Released by the end of this scope,
            // which disarms the handler so that the next begin can arm it.
            let (second, stillNone) = try RunMarker.begin(path: path, pid: 42, startedAt: 2_000)
            XCTAssertNil(stillNone, "a clean end leaves nothing for the next run")
            XCTAssertEqual(second.path, path)
        }
        let (third, unclean) = try RunMarker.begin(path: path, pid: 43, startedAt: 3_000)
        defer { third.end() }
        XCTAssertEqual(unclean, UncleanEnd(pid: 42, startedAt: 2_000, crash: nil))
    }

    func testACrashLineIsReadWithItsSignalAndTime() throws {
        let directory = try TestEnvironment.temporaryDirectory("run-marker")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("run-marker").path
        try Data("run 7 1700000000000\ncrashed 4 1700000001234\n".utf8).write(to: URL(fileURLWithPath: path))
        let (marker, previous) = try RunMarker.begin(path: path, pid: 8, startedAt: 1_700_000_002_000)
        defer { marker.end() }
        XCTAssertEqual(previous?.pid, 7)
        XCTAssertEqual(previous?.startedAt, 1_700_000_000_000)
        XCTAssertEqual(previous?.crash, UncleanEnd.Crash(signal: SIGILL, at: 1_700_000_001_234))
        XCTAssertEqual(previous?.crash?.signalName, "SIGILL")
    }
}

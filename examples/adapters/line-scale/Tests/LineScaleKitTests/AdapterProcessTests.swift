import Foundation
import HealthgateAdapter
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The built adapter against real files and FIFOs in a temporary folder, spoken with as the
/// gateway speaks with it.
final class AdapterProcessTests: XCTestCase {
    private var folder: URL!

    private let first = "2026-11-30T06:30:14Z ST,GS,+0071.10kg\n"
    private let second = "2026-11-30T06:31:20Z ST,NT,+0159.70lb\n"

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("line-scale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func config(_ path: URL, follow: Bool = true) -> String {
        #"{"path":"\#(path.path)","serial":"SC-1001","follow":\#(follow)}"#
    }

    func testFollowsAGrowingFileAndExitsOnStop() throws {
        let file = folder.appendingPathComponent("weighings.txt")
        try Data(first.utf8).write(to: file)
        let adapter = try AdapterProcess(config: config(file))
        XCTAssert(adapter.wait { $0.checkpointOffsets == [38] }, "\(adapter.lines)")
        XCTAssertEqual(adapter.messages.readingIDs, ["SC-1001/2026-11-30T06:30:14Z"])

        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        // Half a line, then the rest: only a complete line is read.
        handle.write(Data(second.utf8.prefix(10)))
        handle.write(Data(second.utf8.dropFirst(10)))
        try handle.close()
        XCTAssert(adapter.wait { $0.checkpointOffsets == [38, 76] }, "\(adapter.lines)")
        XCTAssertEqual(adapter.messages.readingIDs, ["SC-1001/2026-11-30T06:30:14Z", "SC-1001/2026-11-30T06:31:20Z"])

        adapter.write(#"{"type":"stop"}"#)
        adapter.closeInput()
        XCTAssertEqual(adapter.exitStatus(), 0)
    }

    func testResumesFromItsCheckpointAndStopsAtTheEndWithoutFollow() throws {
        let file = folder.appendingPathComponent("weighings.txt")
        try Data((first + second).utf8).write(to: file)
        let adapter = try AdapterProcess(config: config(file, follow: false), checkpoint: #"{"offset":38}"#)
        XCTAssert(adapter.wait { $0.states.contains { $0.hasPrefix("read to its end") } }, "\(adapter.lines)")
        XCTAssertEqual(adapter.messages.readingIDs, ["SC-1001/2026-11-30T06:31:20Z"])
        XCTAssertEqual(adapter.messages.checkpointOffsets, [76])
        // The end of stdin ends it too.
        adapter.closeInput()
        XCTAssertEqual(adapter.exitStatus(), 0)
    }

    func testReadsAFifoFromOneWriterAfterAnotherWithoutCheckpoints() throws {
        let fifo = folder.appendingPathComponent("scale")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let adapter = try AdapterProcess(config: config(fifo))
        XCTAssert(adapter.wait { $0.states == ["reading \(fifo.path)"] }, "\(adapter.lines)")
        for line in [first, second] {
            let writer = try FileHandle(forWritingTo: fifo)
            writer.write(Data(line.utf8))
            try writer.close()
        }
        XCTAssert(adapter.wait { $0.readingIDs.count == 2 }, "\(adapter.lines)")
        XCTAssertEqual(adapter.messages.checkpointOffsets, [])
        adapter.write(#"{"type":"stop"}"#)
        XCTAssertEqual(adapter.exitStatus(), 0)
    }

    func testAConfigurationErrorExits1() throws {
        let adapter = try AdapterProcess(config: #"{"path":"/tmp/w.txt","serial":"SC-1001","unknown":1}"#)
        XCTAssertEqual(adapter.exitStatus(), 1)
        XCTAssertEqual(adapter.messages.errors, [#"configuration: unknown key "unknown"; known keys: follow, model, path, serial"#])
    }

    func testAPathThatCannotBeReadExits1() throws {
        let adapter = try AdapterProcess(config: config(folder.appendingPathComponent("missing")))
        XCTAssertEqual(adapter.exitStatus(), 1)
        XCTAssertEqual(adapter.messages.errors.count, 1)
        XCTAssert(adapter.messages.errors.first?.hasPrefix("stat ") == true, "\(adapter.lines)")

        let directory = try AdapterProcess(config: config(folder))
        XCTAssertEqual(directory.exitStatus(), 1)
        XCTAssertEqual(directory.messages.errors, ["\(folder.path) is a directory, not a tty, a FIFO or a regular file"])
    }
}

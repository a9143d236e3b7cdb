import AsyncPrimitives
import Foundation
import GatewayTesting
import LinuxSystem
import XCTest

/// `UnixLineServer` on a real socket: one answer line per request line, in order; an over-long
/// line gets the closing line and the connection ends; a second server on a live path is refused.
/// (The limits under load, busy clients and running out of descriptors are driven through the
/// built gateway's control socket in ControlSocketEndToEndTests.)
final class UnixLineServerTests: XCTestCase {
    private let closingLines = UnixLineServer.ClosingLines(
        busy: Array("busy".utf8), tooLong: Array("too long".utf8), idle: Array("idle".utf8))

    func testAnswersPipelinedLinesInOrderSkippingBlankOnes() async throws {
        let directory = try TestEnvironment.temporaryDirectory("line-server")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nested/s.sock").path
        let server = UnixLineServer(path: path, queueLabel: "line-server-test", closingLines: closingLines) { line in
            Array("echo:".utf8) + line
        }
        try await server.start()
        defer { server.stop() }

        let received = try await Self.exchange(path: path, sending: "a\n \r\nb\nc\n", lines: 3)
        XCTAssertEqual(received, "echo:a\necho:b\necho:c\n")
    }

    func testAnOverLongLineGetsTheClosingLineAndEndsTheConnection() async throws {
        let directory = try TestEnvironment.temporaryDirectory("line-server")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sock").path
        let server = UnixLineServer(
            path: path, queueLabel: "line-server-test", limits: .init(maximumRequestBytes: 8), closingLines: closingLines
        ) { line in line }
        try await server.start()
        defer { server.stop() }

        // Read until the server closes the connection: the closing line, then end of file.
        let received = try await Self.exchange(path: path, sending: "0123456789\n", lines: nil)
        XCTAssertEqual(received, "too long\n")
    }

    func testASecondServerOnALivePathIsRefusedAndStopRemovesTheFile() async throws {
        let directory = try TestEnvironment.temporaryDirectory("line-server")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sock").path
        let first = UnixLineServer(path: path, queueLabel: "line-server-test", closingLines: closingLines) { $0 }
        try await first.start()
        let second = UnixLineServer(path: path, queueLabel: "line-server-test-2", closingLines: closingLines) { $0 }
        do {
            try await second.start()
            XCTFail("a second server started on a path the first answers on")
        } catch {
            XCTAssertEqual(error.code, .alreadyServed)
            XCTAssertEqual(error.errno, .addressInUse)
            XCTAssertEqual(error.path, path)
        }
        first.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        // The path is free again.
        try await second.start()
        second.stop()
    }

    /// Connects to `path`, sends `text`, and reads until `lines` newlines arrived, or until the
    /// server closes the connection when `lines` is nil. The blocking client runs on a queue of
    /// its own, never on the cooperative pool; it gives up after 10 s.
    private static func exchange(path: String, sending text: String, lines: Int?) async throws -> String {
        try await QueueExecutor(label: "line-server-test-client").run { () throws -> String in
            let socket = try UnixStreamSocket.connect(to: path)
            defer { socket.close() }
            let deadline = ContinuousClock.now + .seconds(10)
            try UnixStreamSocket.sendAll(socket, Array(text.utf8), deadline: deadline)
            var received: [UInt8] = []
            while lines.map({ count in received.filter { $0 == UInt8(ascii: "\n") }.count < count }) ?? true {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw Errno.timedOut }
                guard try UnixStreamSocket.waitReadable(socket, timeout: left) else { continue }
                guard let chunk = try read(socket), !chunk.isEmpty else { break }
                received += chunk
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// What `socket` has to read; nil when the server reset the connection, as Linux does when
    /// a Unix socket closes with bytes it never read (an over-long line's rest).
    private static func read(_ socket: FileDescriptor) throws(Errno) -> [UInt8]? {
        do {
            return try socket.read(maximum: 4096)
        } catch .connectionReset {
            return nil
        }
    }
}

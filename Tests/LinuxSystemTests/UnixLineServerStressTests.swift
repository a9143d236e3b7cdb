import AsyncPrimitives
import Dispatch
import Foundation
import Glibc
import GatewayTesting
import LinuxSystem
import XCTest

/// `UnixLineServer` under clients that leave at any point: in the middle of a line, with a
/// request in flight (reading suspended), while a large answer waits for room in a small socket
/// buffer (the write path), and while the server stops. After each round of that, a fresh client
/// must still get exact answers, which a server whose watches died (or a process that died in
/// libdispatch) cannot give.
///
/// Bounded: `HEALTHGATE_STRESS_SECONDS` (default 3) of rounds. Set it higher for a soak.
final class UnixLineServerStressTests: XCTestCase {
    private let closingLines = UnixLineServer.ClosingLines(
        busy: Array("busy".utf8), tooLong: Array("too long".utf8), idle: Array("idle".utf8))

    /// "big N" is answered with N bytes, "slow" after a moment (reading stays suspended while it
    /// waits), anything else is echoed.
    private static let handler: UnixLineServer.LineHandler = { line in
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("big "), let size = Int(text.dropFirst(4)) {
            return [UInt8](repeating: UInt8(ascii: "x"), count: size)
        }
        if text == "slow" {
            try? await Task.sleep(for: .microseconds(Int.random(in: 0...2000)))
            return Array("slept".utf8)
        }
        return Array("echo:".utf8) + line
    }

    func testClientsLeavingAtAnyPointAndStopsRacingRequestsLeaveAServerThatAnswersExactly() async throws {
        let budget = StressBudget.seconds(default: 3)
        let directory = try TestEnvironment.temporaryDirectory("line-server-stress")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sock").path
        let deadline = ContinuousClock.now + budget
        let visits = Tally()
        var rounds = 0
        repeat {
            let server = UnixLineServer(
                path: path, queueLabel: "line-server-stress", limits: .init(maximumRequestBytes: 1024),
                closingLines: closingLines, handler: Self.handler)
            try await server.start()
            // Clients that leave at random points, on threads of their own, while this round lasts.
            let roundEnd = ContinuousClock.now + .milliseconds(150)
            let chaos = Self.startClients(6, until: roundEnd, path: path, visits: visits)
            // Half the rounds stop while those clients are still at it.
            if Bool.random() { await Self.finished(chaos) }
            let answers = try await Self.exchange(path: path, sending: "ping\nbig 300000\nslow\n", lines: 3)
            XCTAssertEqual(
                answers, "echo:ping\n" + String(repeating: "x", count: 300_000) + "\nslept\n",
                "round \(rounds): a fresh client did not get its exact answers")
            server.stop()
            await Self.finished(chaos)
            rounds += 1
        } while ContinuousClock.now < deadline
        XCTAssertGreaterThan(rounds, 0)
        print("UnixLineServerStressTests: \(rounds) rounds, \(visits.value) clients connected in \(budget)")
    }

    /// `count` clients on queues of their own, each visiting and leaving until `end`.
    private static func startClients(_ count: Int, until end: ContinuousClock.Instant, path: String, visits: Tally) -> DispatchGroup {
        let group = DispatchGroup()
        for index in 0..<count {
            DispatchQueue(label: "line-server-stress-client-\(index)").async(group: group) {
                while ContinuousClock.now < end {
                    if visitAndLeave(path: path) { visits.add() }
                }
            }
        }
        return group
    }

    /// Returns once every client of `group` has finished.
    private static func finished(_ group: DispatchGroup) async {
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// One client that asks for a mix of answers, with a receive buffer small enough that large
    /// answers block the server, and leaves at a random point: mid-line, before reading, or after
    /// reading part of the answers. Failures (the server stopping under it) are part of the game.
    /// Returns whether it connected.
    @discardableResult
    private static func visitAndLeave(path: String) -> Bool {
        guard let socket = try? UnixStreamSocket.connect(to: path), let fd = socket.rawValue else { return false }
        defer { socket.close() }
        var size: Int32 = 2048
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let script = ["slow\n", "big 200000\n", "ping\n", "slow\nslow\n", "big 70000\nping\n", "\n"]
        var request = (0..<Int.random(in: 1...4)).map { _ in script.randomElement() ?? "\n" }.joined()
        if Bool.random() { request = String(request.prefix(Int.random(in: 0...request.count))) }
        _ = try? UnixStreamSocket.sendSome(socket, Array(request.utf8))
        let reads = Int.random(in: 0...3)
        for _ in 0..<reads {
            guard (try? UnixStreamSocket.waitReadable(socket, timeout: .milliseconds(5))) == true else { break }
            guard let chunk = try? socket.read(maximum: Int.random(in: 1...65_536)), !chunk.isEmpty else { break }
        }
        return true
    }

    /// Sends `text` and reads until `lines` newlines arrived, within 10 s.
    private static func exchange(path: String, sending text: String, lines: Int) async throws -> String {
        try await QueueExecutor(label: "line-server-stress-probe").run { () throws -> String in
            let socket = try UnixStreamSocket.connect(to: path)
            defer { socket.close() }
            let deadline = ContinuousClock.now + .seconds(10)
            try UnixStreamSocket.sendAll(socket, Array(text.utf8), deadline: deadline)
            var received: [UInt8] = []
            while received.filter({ $0 == UInt8(ascii: "\n") }).count < lines {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw Errno.timedOut }
                guard try UnixStreamSocket.waitReadable(socket, timeout: left) else { continue }
                let chunk = try socket.read(maximum: 65_536)
                if chunk.isEmpty { break }
                received += chunk
            }
            return String(decoding: received, as: UTF8.self)
        }
    }
}

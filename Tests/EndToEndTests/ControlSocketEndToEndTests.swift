import Foundation
import GatewayTesting
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's control socket against hostile and careless clients, with the real executable:
/// silent clients, a flood without a newline, half a request, more clients than the cap, and a
/// process out of file descriptors.
final class ControlSocketEndToEndTests: XCTestCase {
    private static let status = #"{"command":"status"}"#

    /// `status` still answers at once while 200 idle clients, a 10 MB line, a half-written line
    /// and a client that never reads its answers are connected; the flood gets an error and is
    /// cut off; the half line and the non-reader time out.
    func testStatusAnswersWhileIdleFloodingAndHalfWrittenClientsAreConnected() async throws {
        let healthgate = try HealthgateExecutable()
        let daemon = try healthgate.start(["run"])
        let path = healthgate.controlSocket.path
        try await waitForSocket(healthgate, daemon)

        let idle = try (0..<200).map { _ in try TestSocket(path: path) }
        let halfWritten = try TestSocket(path: path)
        XCTAssertTrue(halfWritten.send(#"{"command":"sta"#))
        let flooder = try TestSocket(path: path)
        let flood = Task.detached { flooder.send([UInt8](repeating: UInt8(ascii: "x"), count: 10 << 20)) }
        // Asks and asks and never reads: its answers fill its own socket buffer, nobody else's.
        let nonReader = try TestSocket(path: path)
        let requests = Array(String(repeating: Self.status + "\n", count: 5000).utf8)
        let asking = Task.detached { nonReader.send(requests) }

        // The requirement is under 100 ms; the assertion allows 1 s so that a loaded CI machine
        // does not fail it. The figures are printed for the record.
        var rounds: [Duration] = []
        for _ in 0..<20 {
            let (duration, answer) = try TestSocket.roundTrip(path: path, Self.status)
            XCTAssertTrue(answer?.contains(#""ok":true"#) ?? false, answer ?? "no answer")
            rounds.append(duration)
        }
        let started = ContinuousClock.now
        let command = try await healthgate.run(["status", "--format", "json"])
        let commandDuration = ContinuousClock.now - started
        XCTAssertEqual(command.status, 0, command.standardError)
        let slowest = try XCTUnwrap(rounds.max())
        print("status round trips with 200 idle clients, a 10 MB line, a half line and a non-reader connected: "
            + "median \(rounds.sorted()[rounds.count / 2]), max \(slowest); `healthgate status` process \(commandDuration)")
        XCTAssertLessThan(slowest, .seconds(1))

        let floodFinished = await flood.value
        XCTAssertFalse(floodFinished, "the daemon closes a connection whose line passes the limit, long before 10 MB")
        let refusal = flooder.readLine(timeout: .seconds(5)) ?? ""
        XCTAssertTrue(refusal.contains("longer than 65536 bytes"), refusal)

        // Silent clients were not harmed and did not harm: one of them is served now.
        XCTAssertTrue(idle[0].send(#"{"command":"ping"}"# + "\n"))
        let pong = idle[0].readLine() ?? ""
        XCTAssertTrue(pong.contains(#""ok":true"#) && pong.contains(#""result":"pong""#), pong)

        // Half a request and no more: closed after the idle timeout (10 s), with the reason.
        let timedOut = halfWritten.readLine(timeout: .seconds(30)) ?? ""
        XCTAssertTrue(timedOut.contains("idle for"), timedOut)
        XCTAssertTrue(halfWritten.isClosedByPeer(within: .seconds(5)))
        // The non-reader, stuck since its socket filled, is closed for the same reason; its
        // answers never held anyone up (the round trips above ran while it was stuck).
        XCTAssertTrue(nonReader.isClosedByPeer(within: .seconds(30)))
        _ = await asking.value

        try await daemon.terminate()
    }

    /// Beyond 256 connections a newcomer gets "busy" and is closed; once clients leave, new ones
    /// are served again.
    func testClientsBeyondTheCapAreToldBusy() async throws {
        let healthgate = try HealthgateExecutable()
        let daemon = try healthgate.start(["run"])
        let path = healthgate.controlSocket.path
        try await waitForSocket(healthgate, daemon)

        var held = try (0..<256).map { _ in try TestSocket(path: path) }
        let excess = try TestSocket(path: path)
        let answer = excess.readLine() ?? ""
        XCTAssertTrue(answer.contains("busy"), answer)
        XCTAssertTrue(excess.isClosedByPeer(within: .seconds(5)))

        for socket in held.prefix(10) { socket.close() }
        held.removeFirst(10)
        try await waitUntil(timeout: .seconds(10), "a status answer after clients left") {
            (try? TestSocket.roundTrip(path: path, Self.status).answer)?.contains(#""ok":true"#) ?? false
        }
        let result = try await daemon.terminate()
        XCTAssertTrue(result.standardError.contains("refusing new ones"), result.standardError)
    }

    /// At the process's descriptor limit the accept loop pauses instead of spinning: little CPU,
    /// one warning, and `status` answers again once the clients have gone.
    func testOutOfDescriptorsDoesNotSpinAndRecovers() async throws {
        let healthgate = try HealthgateExecutable()
        let daemon = try healthgate.start(["run"])
        let path = healthgate.controlSocket.path
        try await waitForSocket(healthgate, daemon)
        // Lower the limit only once the store holds its files open, so that only the control
        // socket runs short.
        try await waitUntil(timeout: .seconds(30), "the store to open") {
            daemon.standardError.contains("committing records into")
        }

        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd").count
        let limit = open + 4
        let prlimit = Process()
        prlimit.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        prlimit.arguments = ["--pid", String(daemon.pid), "--nofile=\(limit):\(limit)"]
        try prlimit.run()
        prlimit.waitUntilExit()
        XCTAssertEqual(prlimit.terminationStatus, 0)

        var clients = try (0..<40).map { _ in try TestSocket(path: path) }
        try await waitUntil(timeout: .seconds(10), "the daemon to report the descriptor limit") {
            daemon.standardError.contains("control socket cannot accept")
        }
        // A measurement window, not a wait for state: how much CPU and log the daemon spends
        // while clients wait in the backlog at the limit.
        let cpuBefore = try cpuSeconds(daemon.pid)
        let logBefore = daemon.standardError.utf8.count
        let window = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < window { try await Task.sleep(for: .milliseconds(50)) }
        let cpu = try cpuSeconds(daemon.pid) - cpuBefore
        // Only the control socket's lines: other components short of descriptors meanwhile (the
        // workouts opening the store, if they had not yet) log their own retries.
        let logGrowth = String(decoding: Array(daemon.standardError.utf8.dropFirst(logBefore)), as: UTF8.self)
            .split(separator: "\n").filter { $0.contains("healthgate/control") }.reduce(0) { $0 + $1.utf8.count + 1 }
        print("at the descriptor limit for 1 s: \(cpu) s of CPU, \(logGrowth) bytes of the control socket's log")
        XCTAssertLessThan(cpu, 0.3, "the accept loop spins")
        XCTAssertLessThan(logGrowth, 512, daemon.standardError)
        XCTAssertEqual(daemon.standardError.components(separatedBy: "control socket cannot accept").count, 2,
                       "the condition is logged once")

        for client in clients { client.close() }
        clients = []
        try await waitUntil(timeout: .seconds(20), "a status answer after the clients left") {
            (try? TestSocket.roundTrip(path: path, Self.status).answer)?.contains(#""ok":true"#) ?? false
        }
        try await daemon.terminate()
    }

    private func waitForSocket(_ healthgate: HealthgateExecutable, _ daemon: HealthgateExecutable.RunningProcess) async throws {
        let path = healthgate.controlSocket.path
        try await waitUntil(timeout: .seconds(60), "the control socket (\(daemon.standardError))") {
            FileManager.default.fileExists(atPath: path) && (try? TestSocket(path: path)) != nil
        }
    }

    /// User plus system CPU time of a process, from /proc/PID/stat (proc(5): fields 14 and 15,
    /// in clock ticks).
    private func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name (field 2) may hold spaces; the fields after it start past its ')'.
        let fields = try XCTUnwrap(stat.split(separator: ")").last).split(separator: " ")
        let user = try XCTUnwrap(Double(fields[11]))
        let system = try XCTUnwrap(Double(fields[12]))
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

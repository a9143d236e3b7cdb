import Dispatch
import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import LinuxSystem
import SQLiteStore
import SerialPedometer
import Synchronization
import XCTest

/// Hostile input on a serial line, against the built executable: a flood of line data must not
/// grow memory without bound or drown the log, the source must keep counting afterwards, and a
/// stop must end the process while the flood goes on.
final class FloodTests: XCTestCase {
    /// Writes `line` over and over to the pty master from its own thread until `limit` bytes are
    /// written or `stop` is set. Uses writeSome and a short poll, so that it notices `stop` even
    /// when nobody reads the line any more.
    final class Flood: Sendable {
        private let stopped = Atomic<Bool>(false)
        private let written = Atomic<Int>(0)
        private let done = Atomic<Bool>(false)

        var bytesWritten: Int { written.load(ordering: .relaxed) }
        var isDone: Bool { done.load(ordering: .acquiring) }

        func stop() { stopped.store(true, ordering: .relaxed) }

        func start(on pty: PseudoTerminal, line: String, limit: Int) {
            let chunk = Array(String(repeating: line, count: 65_536 / line.utf8.count).utf8)
            DispatchQueue(label: "flood").async {
                var pending = chunk[...]
                while !self.stopped.load(ordering: .relaxed), self.written.load(ordering: .relaxed) < limit {
                    do throws(Errno) {
                        let count = try pty.master.writeSome(pending)
                        self.written.add(count, ordering: .relaxed)
                        pending = pending.dropFirst(count)
                        if pending.isEmpty { pending = chunk[...] }
                    } catch {
                        guard error == .wouldBlock, let fd = try? pty.master.descriptor() else { break }
                        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&entry, 1, 100)
                    }
                }
                self.done.store(true, ordering: .releasing)
            }
        }
    }

    /// Resident set size of `pid` in bytes (VmRSS in /proc/<pid>/status).
    static func residentBytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return nil
    }

    func testA32MegabyteFloodStaysBoundedKeepsCountingAndAStopEndsTheProcess() async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }
        let line = try CrashTests.PedometerLine(serial: "SN-FLOOD")
        defer { line.pty.hangUp() }
        let database = healthgate.root.appendingPathComponent("samples.sqlite").path
        let link = healthgate.root.appendingPathComponent("pedometer")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: line.pty.slavePath)
        let config = healthgate.root.appendingPathComponent("config.json")
        try """
            {"sources": [{"kind": "serial-pedometer", "name": "pedo", "config": {"path": "\(link.path)", "exclusive": false}}],
             "sinks": [{"kind": "sqlite", "name": "store"}], "store": {"path": "\(database)"}}
            """.write(to: config, atomically: true, encoding: .utf8)

        let process = try healthgate.start(["run", "--config", config.path])
        try await line.identify()
        try line.send("ST,1000,10")
        func committed(_ steps: UInt32) async throws {
            try await waitUntil(timeout: .seconds(30), "counter \(steps) committed") {
                let state = try? await CrashTests.committedCounter("SN-FLOOD", database: database)
                return state?.steps == steps
            }
        }
        try await committed(1000)
        let before = try XCTUnwrap(Self.residentBytes(process.pid))
        let logBefore = process.standardError.utf8.count

        // 32 MiB of short lines that look like readings but are not: each is garbage to count
        // and (at most once in a while) to log. Chunks are dropped under the flood; the line cut
        // by a drop must not be joined with what follows the gap ("ST,1" + CR LF would be a
        // reading of 1 step, a reboot).
        let megabytes = 32
        let flood = Flood()
        flood.start(on: line.pty, line: "ST,1*00 no sentence\r\n", limit: megabytes << 20)
        let peakBytes = Mutex(before)
        let pid = process.pid
        try await waitUntil(timeout: .seconds(120), "the flood to be written") {
            if let now = Self.residentBytes(pid) { peakBytes.withLock { $0 = max($0, now) } }
            return flood.isDone
        }
        let peak = peakBytes.withLock { $0 }
        let growth = peak - before
        let logged = process.standardError.utf8.count - logBefore
        XCTAssertLessThan(growth, 16 << 20, "RSS grew by \(growth >> 20) MiB for \(megabytes) MiB of input")
        XCTAssertLessThan(logged, flood.bytesWritten / 100, "\(logged) bytes of log for \(flood.bytesWritten) bytes of input")

        // Still counting once the flood has passed. The flood may have stopped mid-line: end
        // that line first, as a device resynchronising would. The reading is repeated, as a
        // device does, until counted: while the backlog of the flood is full a new chunk is
        // dropped, and a repeated cumulative reading counts nothing twice.
        try line.pty.write(Array("\r\n".utf8))
        do {
            try await waitUntil(timeout: .seconds(30), "counter 1010 committed") {
                try? line.send("ST,1010,17.5")
                let state = try? await CrashTests.committedCounter("SN-FLOOD", database: database)
                return state?.steps == 1010
            }
        } catch {
            XCTFail("\(error); the gateway logged:\n\(process.standardError.suffix(4000))")
            throw error
        }

        // Every rejected line is counted in status, whether logged or not.
        let status = try await healthgate.run(["status", "--format", "json"])
        let json = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        let plugins = json?["plugins"] as? [[String: Any]] ?? []
        let details = plugins.first { $0["name"] as? String == "pedo" }?["details"] as? [String: String] ?? [:]
        XCTAssertGreaterThan(Int(details["garbage.malformed"] ?? "") ?? 0, 1000, "\(details)")
        XCTAssertNotNil(details["warningsSuppressed"], "\(details)")
        print("flood status: \(details.filter { $0.key.hasPrefix("garbage") || $0.key == "chunksDropped" || $0.key == "warningsSuppressed" })")

        // A stop while a flood goes on ends the process, gracefully.
        let second = Flood()
        second.start(on: line.pty, line: "garbage line\r\n", limit: .max)
        defer { second.stop() }
        try await waitUntil("the second flood to be under way") { second.bytesWritten > 1 << 20 }
        process.send(SIGTERM)
        let result = try await process.waitForExit(timeout: .seconds(20))
        XCTAssertEqual(result.status, 0, result.standardError.suffix(2000).description)
        second.stop()

        let steps = try await HealthStore(path: database, access: .readOnly).samples(of: .stepCount)
        XCTAssertEqual(steps.reduce(0) { $0 + $1.quantity.value }, 10)
        print("flood: RSS \(before >> 20) MiB → peak \(peak >> 20) MiB, \(logged) bytes of log for \(flood.bytesWritten) bytes")
    }
}

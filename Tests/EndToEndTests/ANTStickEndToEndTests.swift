import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLite
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// The real executable's `ant-heart-rate` source against a USB ANT stick emulator on a real
/// pseudo-terminal (`Tests/Fixtures/ant_stick_emulator.py`, written from the ANT message protocol
/// and the ANT+ heart-rate profile, not from healthgate's simulator). The emulator logs every beat
/// each strap sent; the store must hold each of them once, in order, with the emulator's RR to the
/// 1/1024 s. A class of 30 straps for 60 s; a strap that leaves and returns; the stick unplugged
/// (its pty gone) and plugged in again at the configured path; the gateway killed with SIGKILL and
/// started again; a stick that answers a command with an error.
///
/// The gateway tests skip, saying why, when `healthgate plugins` has no `ant-heart-rate` (the
/// plugin is built on another branch); the emulator's own tests always run.
final class ANTStickEndToEndTests: XCTestCase {
    /// The tests' network key ("LAB-KEY!"): healthgate does not ship the ANT+ key, and neither do
    /// its tests.
    static let networkKey = "4c41422d4b455921"

    // MARK: The emulator itself

    /// The emulator's own tests, through its pty with a parser of their own: framing and checksums,
    /// every command's answer and the error codes its modes ask for, scan mode with extended ids,
    /// paired channels without scan mode, pages, the beat log, a strap leaving, an unplug.
    func testTheStickEmulatorAnswersAsTheProtocolSays() async throws {
        let result = try await TestPython.run("Tests/Fixtures/ant_stick_emulator_test.py")
        XCTAssertEqual(result.status, 0, result.errors + result.output)
        XCTAssertTrue(result.errors.contains("\nOK"), result.errors)
        XCTAssertFalse(result.errors.contains("skipped"), result.errors)
    }

    // MARK: The gateway against the emulator

    func testAClassOfThirtyStrapsForSixtySecondsStoresEveryBeatOnceWithItsRR() async throws {
        let rig = try await Rig.make(self, name: "class")
        let emulator = try await rig.emulator(["--straps", "30", "--duration", "60"])
        let gateway = try rig.startGateway()
        try await rig.waitForEmulatorToFinish(timeout: .seconds(150))
        try await rig.stop(gateway)
        try await emulator.stop()

        let report = try await rig.compare(everyBeat: true)
        XCTAssertEqual(report.straps, 30)
        XCTAssertGreaterThan(report.sent, 30 * 60)
        print("ANT+ class through the emulator: 30 straps, 60 s, \(report.sent) beats sent, \(report.stored) stored, "
            + "\(report.intervalsChecked) RR intervals equal to the emulator's, \(report.broadcasts) broadcasts")
    }

    func testAStrapThatLeavesAndReturnsIsFoundAgain() async throws {
        let rig = try await Rig.make(self, name: "leave")
        // Strap 0 is out of range for 9 s (lostAfterSeconds is 5), from 6 s after scanning began.
        let emulator = try await rig.emulator(["--straps", "3", "--duration", "24", "--leave", "0:6:9"])
        let gateway = try rig.startGateway()
        try await rig.waitForEmulatorToFinish(timeout: .seconds(90))
        try await rig.stop(gateway)
        try await emulator.stop()

        let report = try await rig.compare(everyBeat: true)
        let leaver = try XCTUnwrap(rig.straps().first)
        let beats = try rig.sentBeats()[leaver.device] ?? []
        XCTAssertTrue(beats.dropFirst().contains { $0.afterGap }, "the emulator logged the return as after a gap")
        XCTAssertEqual(report.straps, 3)
        let stored = try await rig.storedBeats(leaver.identifier)
        XCTAssertEqual(stored.count, beats.count, "the leaver's beats before and after its absence")
        XCTAssertTrue(gateway.standardError.contains(leaver.identifier), "the log names the strap")
    }

    func testAStickUnpluggedAndPluggedInAgainContinuesTheClass() async throws {
        let rig = try await Rig.make(self, name: "unplug")
        // The pty closes 8 s after scanning began (the link removed) and a new one is at the link 3 s later.
        let emulator = try await rig.emulator(["--straps", "4", "--duration", "26", "--unplug", "8:3"])
        let gateway = try rig.startGateway()
        try await rig.waitForEmulatorToFinish(timeout: .seconds(90))
        try await rig.stop(gateway)
        try await emulator.stop()

        let plugs = try rig.records("plug")
        XCTAssertEqual(plugs.count, 2, "plugged, unplugged, plugged again")
        let unplug = try XCTUnwrap(try rig.records("unplug").first?["t"] as? Double)
        // Beats from both sides of the unplug are stored, none twice, in order; a beat in the
        // stick's buffer when it went may be lost, nothing else.
        let report = try await rig.compare(everyBeat: false)
        let sent = try rig.sentBeats()
        for strap in try rig.straps() {
            let stored = try await rig.storedBeats(strap.identifier)
            let before = sent[strap.device, default: []].filter { $0.sentAt < unplug - 1 }.count
            let after = sent[strap.device, default: []].filter { $0.sentAt > unplug + 4 }.count
            XCTAssertGreaterThanOrEqual(stored.count, before + after, "\(strap.identifier): beats before and after the unplug")
        }
        XCTAssertEqual(report.straps, 4)
    }

    func testKilledWithSIGKILLAndStartedAgainStoresNoBeatTwice() async throws {
        let rig = try await Rig.make(self, name: "kill")
        let emulator = try await rig.emulator(["--straps", "4", "--duration", "30"])
        var gateway = try rig.startGateway()
        try await waitUntil(timeout: .seconds(60), "heartbeats committed before the kill") {
            (try? rig.committedHeartRates()) ?? 0 > 40
        }
        gateway.send(SIGKILL)
        _ = try await gateway.waitForExit(timeout: .seconds(30))
        let atKill = try rig.committedHeartRates()
        gateway = try rig.startGateway()
        try await rig.waitForEmulatorToFinish(timeout: .seconds(90))
        try await rig.stop(gateway)
        try await emulator.stop()

        let report = try await rig.compare(everyBeat: false)
        XCTAssertGreaterThan(try rig.committedHeartRates(), atKill, "the restarted gateway stored more")
        XCTAssertGreaterThan(report.stored, report.sent / 2)
    }

    func testAStickThatAnswersACommandWithAnErrorIsNamedInTheLog() async throws {
        let rig = try await Rig.make(self, name: "refusing")
        // The RF frequency command (0x45) is answered with INVALID_PARAMETER_PROVIDED (0x33).
        let emulator = try await rig.emulator(["--straps", "2", "--fail-command", "0x45=0x33"])
        let gateway = try rig.startGateway()
        try await waitUntil(timeout: .seconds(30), "the emulator to refuse the RF command") {
            ((try? rig.records("command")) ?? []).contains { ($0["id"] as? Int) == 0x45 }
        }
        try await waitUntil(timeout: .seconds(30), "an error naming the command and the stick") {
            Self.namesTheRefusal(gateway.standardError, stick: rig.link.path)
        }
        try await rig.stop(gateway, expectingSuccess: false)
        try await emulator.stop()
        XCTAssertTrue(Self.namesTheRefusal(gateway.standardError, stick: rig.link.path), gateway.standardError)
        let beats = try await rig.storedBeats(nil)
        XCTAssertEqual(beats.count, 0, "no channel, no beats")
    }

    /// A log line that names the stick's path and the refused command by its id (0x45, the RF
    /// frequency) and the code the stick answered (0x33, INVALID_PARAMETER_PROVIDED).
    static func namesTheRefusal(_ log: String, stick: String) -> Bool {
        log.split(separator: "\n").contains { line in
            line.contains(stick) && line.lowercased().contains("0x45")
                && (line.contains("INVALID_PARAMETER_PROVIDED") || line.lowercased().contains("0x33"))
        }
    }
}

// MARK: - The rig: emulator, configuration, store

/// One test's emulator, configuration and store, in the executable's private root.
struct Rig: Sendable {
    let healthgate: HealthgateExecutable
    /// The configured stick path: a symlink the emulator points at its pty.
    let link: URL
    let log: URL
    let database: String
    let configuration: URL

    /// Skips (printing why) unless `healthgate plugins` lists `ant-heart-rate`; writes the key file
    /// and the configuration.
    static func make(_ test: XCTestCase, name: String) async throws -> Rig {
        let healthgate = try HealthgateExecutable()
        let plugins = try await healthgate.run(["plugins"])
        guard plugins.standardOutput.split(separator: "\n").contains(where: { $0.hasPrefix("ant-heart-rate ") }) else {
            let reason = "healthgate plugins lists no ant-heart-rate source (the plugin's branch is not merged): "
                + "the ANT stick end-to-end tests did not run"
            print(reason)
            throw XCTSkip(reason)
        }
        let root = healthgate.root
        let keyFile = root.appendingPathComponent("ant-network.key")
        try Data("\(ANTStickEndToEndTests.networkKey)\n".utf8).write(to: keyFile)
        let rig = Rig(
            healthgate: healthgate, link: root.appendingPathComponent("ant-stick-\(name)"),
            log: root.appendingPathComponent("emulator-\(name).jsonl"),
            database: root.appendingPathComponent("\(name).sqlite").path,
            configuration: root.appendingPathComponent("\(name).json"))
        let configuration: [String: Any] = [
            "sources": [[
                "kind": "ant-heart-rate", "name": "class",
                "config": [
                    "transport": "stick", "path": rig.link.path, "networkKeyFile": keyFile.path, "lostAfterSeconds": 5,
                ] as [String: Any],
            ] as [String: Any]],
            "store": ["path": rig.database],
            "sinks": [["kind": "sqlite"]],
        ]
        try JSONSerialization.data(withJSONObject: configuration, options: [.sortedKeys]).write(to: rig.configuration)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: root) }
        return rig
    }

    /// Starts the emulator with `arguments` (plus the link, the log and the key) and waits for its pty.
    func emulator(_ arguments: [String]) async throws -> EmulatorProcess {
        let process = try EmulatorProcess(
            arguments: arguments + ["--link", link.path, "--log", log.path, "--network-key", ANTStickEndToEndTests.networkKey],
            errors: healthgate.root.appendingPathComponent(log.lastPathComponent + ".stderr"))
        let link = self.link
        try await waitUntil(timeout: .seconds(30), "the emulator's pty at \(link.path)") {
            guard process.isRunning else { throw EmulatorProcess.Failed(what: "it exited before making its pty") }
            return (try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) != nil
        }
        return process
    }

    func startGateway() throws -> HealthgateExecutable.RunningProcess {
        try healthgate.start(["run", "--config", configuration.path])
    }

    /// SIGTERM, and the exit status 0 unless told otherwise.
    func stop(_ gateway: HealthgateExecutable.RunningProcess, expectingSuccess: Bool = true) async throws {
        gateway.send(SIGTERM)
        let result = try await gateway.waitForExit(timeout: .seconds(60))
        if expectingSuccess { XCTAssertEqual(result.status, 0, result.standardError) }
    }

    /// Waits for the emulator's "finished" line, then (at most 30 s) for the store to have as many
    /// heart-rate samples as beats were sent: the gateway has read the last broadcasts.
    func waitForEmulatorToFinish(timeout: Duration) async throws {
        try await waitUntil(timeout: timeout, "the emulator to finish its broadcasts") {
            !((try? records("finished")) ?? []).isEmpty
        }
        let sent = try sentBeats().values.reduce(0) { $0 + $1.count }
        try? await waitUntil(timeout: .seconds(30), "\(sent) heart-rate samples") {
            (try? committedHeartRates()) ?? 0 >= sent
        }
    }

    // MARK: The emulator's log

    func records(_ event: String? = nil) throws -> [[String: Any]] {
        guard FileManager.default.fileExists(atPath: log.path) else { return [] }
        return try String(decoding: Data(contentsOf: log), as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return event == nil || record["event"] as? String == event ? record : nil
        }
    }

    struct Strap { var device: Int; var identifier: String }

    func straps() throws -> [Strap] {
        try records("strap").compactMap { record in
            guard let device = record["device"] as? Int, let identifier = record["identifier"] as? String else { return nil }
            return Strap(device: device, identifier: identifier)
        }
    }

    struct SentBeat { var rr: Int; var afterGap: Bool; var sentAt: Double }

    func sentBeats() throws -> [Int: [SentBeat]] {
        var beats: [Int: [SentBeat]] = [:]
        for record in try records("beat") {
            guard let device = record["device"] as? Int, let rr = record["rr"] as? Int,
                let afterGap = record["afterGap"] as? Bool, let sentAt = record["sentAt"] as? Double
            else { continue }
            beats[device, default: []].append(SentBeat(rr: rr, afterGap: afterGap, sentAt: sentAt))
        }
        return beats
    }

    // MARK: The store

    struct StoredBeat { var time: Double; var startsRun: Bool }

    /// A strap's stored beats (every ANT strap's when `identifier` is nil), series by series; a beat
    /// starts a run at a series' start or after a gap.
    func storedBeats(_ identifier: String?) async throws -> [StoredBeat] {
        guard FileManager.default.fileExists(atPath: database) else { return [] }
        let series = try await HealthStore(path: database, access: .readOnly).heartbeatSeries().filter { series in
            let local = series.device?.localIdentifier ?? ""
            return identifier.map { local == $0 } ?? local.hasPrefix("ant:")
        }
        return series.sorted { $0.startDate < $1.startDate }.flatMap { series in
            series.beats.enumerated().map { index, beat in
                StoredBeat(
                    time: series.startDate.timeIntervalSince1970 + beat.timeSinceSeriesStart,
                    startsRun: beat.precededByGap || index == 0)
            }
        }
    }

    /// Heart-rate readings of ANT straps in the store.
    func committedHeartRates() throws -> Int {
        Int(try StoredReadings.count(of: "heartRate", fromDevicesLike: "ant:%", in: database))
    }

    struct Report { var straps = 0, sent = 0, stored = 0, intervalsChecked = 0, broadcasts = 0 }

    /// Each strap's stored beats against the ones the emulator sent. Runs of stored beats (within a
    /// series, no gap) are placed where their intervals equal the sent RR to 1/1024 s, each run
    /// after the previous one: so no beat is stored twice, none out of order, no interval invented.
    /// With `everyBeat`, every sent beat is stored, and every RR the gateway could know (a beat
    /// after a sent beat) is stored without a gap, except at a series' start.
    func compare(everyBeat: Bool, file: StaticString = #filePath, line: UInt = #line) async throws -> Report {
        var report = Report()
        let sent = try sentBeats()
        report.broadcasts = try records("finished").first?["broadcasts"] as? Int ?? 0
        for strap in try straps() {
            report.straps += 1
            let beats = sent[strap.device, default: []]
            let stored = try await storedBeats(strap.identifier)
            report.sent += beats.count
            report.stored += stored.count
            XCTAssertLessThanOrEqual(stored.count, beats.count, "\(strap.identifier): more beats stored than sent", file: file, line: line)
            if everyBeat {
                XCTAssertEqual(stored.count, beats.count, "\(strap.identifier): every beat sent is stored", file: file, line: line)
            }
            for (a, b) in zip(stored, stored.dropFirst()) where b.time <= a.time {
                XCTFail("\(strap.identifier): stored beats out of order or twice at \(b.time)", file: file, line: line)
            }
            // Runs: stored beats joined by an interval the gateway knew.
            var runs: [[Double]] = []
            for beat in stored {
                if beat.startsRun || runs.isEmpty { runs.append([beat.time]) } else { runs[runs.count - 1].append(beat.time) }
            }
            var next = 0  // the first sent beat a run may start at
            var placed = 0
            for run in runs {
                let intervals = zip(run, run.dropFirst()).map { Int(($1 - $0) * 1024) }
                let exactIntervals = zip(run, run.dropFirst()).map { ($1 - $0) * 1024 }
                guard
                    let start = (next..<max(next, beats.count - run.count + 1)).first(where: { start in
                        exactIntervals.enumerated().allSatisfy { offset, interval in
                            let beat = beats[start + offset + 1]
                            return !beat.afterGap && abs(interval - Double(beat.rr)) <= 1
                        }
                    })
                else {
                    XCTFail(
                        "\(strap.identifier): a run of \(run.count) stored beats (intervals \(intervals.prefix(8))…) "
                            + "matches no sent beats after beat \(next): stored twice, out of order or invented",
                        file: file, line: line)
                    break
                }
                report.intervalsChecked += intervals.count
                placed += run.count
                next = start + run.count
            }
            if everyBeat {
                // A beat whose RR the strap sent (the previous beat was sent) is stored with it,
                // except where a series starts.
                let knowable = beats.dropFirst().filter { !$0.afterGap }.count
                XCTAssertGreaterThanOrEqual(
                    stored.count - runs.count, knowable - (runs.count - 1),
                    "\(strap.identifier): RR intervals stored", file: file, line: line)
                XCTAssertEqual(placed, beats.count, "\(strap.identifier): every stored beat placed", file: file, line: line)
            }
        }
        return report
    }
}

/// The emulator as a child process (python from the tests' virtual environment); SIGKILLed if a
/// test leaves it running.
final class EmulatorProcess: Sendable {
    private let process: Process

    struct Failed: Error, CustomStringConvertible {
        var what: String
        var description: String { "ANT stick emulator: \(what)" }
    }

    init(arguments: [String], errors: URL) throws {
        let script = HealthgateExecutable.packageRoot().appendingPathComponent("Tests/Fixtures/ant_stick_emulator.py")
        let process = Process()
        process.executableURL = try TestPython.interpreter()
        process.arguments = [script.path] + arguments
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else {
            throw Failed(what: "cannot create \(errors.path)")
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    var isRunning: Bool { process.isRunning }

    /// SIGTERM: it stops, closes its pty and removes the link.
    func stop() async throws {
        if process.isRunning { process.terminate() }
        try await waitUntil(timeout: .seconds(20), "the emulator to exit") { !self.process.isRunning }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

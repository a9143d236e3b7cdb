import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// What the demo, `status` and `query stats` print for a person, retried as issue #45 found it:
/// live lines that cut long type names and mixed decimals, `(1 gap(s))`, 400-character status
/// lines, 58 empty minutes around 2 with data, fractional step sums.
final class OutputForPeopleTests: XCTestCase {
    /// The built executable with no `COLUMNS` of the test's own: output to a pipe is laid out in
    /// 80 columns.
    private func makeHealthgate() throws -> HealthgateExecutable {
        var healthgate = try HealthgateExecutable()
        healthgate.environment["COLUMNS"] = nil
        return healthgate
    }

    func testLiveLinesFitTheWidthWithWholeTypeNamesAndEachTypesDecimals() async throws {
        let healthgate = try makeHealthgate()
        let database = healthgate.root.appendingPathComponent("live.sqlite").path
        let demo = try await healthgate.run(["demo", "--duration", "6", "--db", database])
        XCTAssertEqual(demo.status, 0, demo.standardError)
        let seen = LiveOutputCheck.check(demo.standardOutput, width: 80)
        XCTAssertTrue(seen.isSuperset(of: ["heartRate", "bloodGlucose", "cyclingSpeed", "heartbeatSeries"]), "\(seen)")
        // The glucose meter's name does not fit after the value in 80 columns: it wraps.
        XCTAssertTrue(demo.standardOutput.split(separator: "\n").contains { $0.hasPrefix("    ") }, demo.standardOutput)
        XCTAssertFalse(demo.standardOutput.contains("(s)") || demo.standardError.contains("(s)"), demo.standardOutput + demo.standardError)

        // Wider: no line needs to wrap, and none does.
        var wide = healthgate
        wide.environment["COLUMNS"] = "120"
        let again = try await wide.run(["demo", "--duration", "3", "--db", database])
        XCTAssertEqual(again.status, 0, again.standardError)
        LiveOutputCheck.check(again.standardOutput, width: 120)
        XCTAssertFalse(again.standardOutput.split(separator: "\n").contains { $0.hasPrefix(" ") }, again.standardOutput)
    }

    /// `status`: the plugins' detail lines wrapped to 80 columns (no terminal), every entry
    /// still there, continuation lines indented under their plugin.
    func testStatusWrapsDetailLinesToTheWidth() async throws {
        let healthgate = try makeHealthgate()
        let database = healthgate.root.appendingPathComponent("status.sqlite").path
        let daemon = try healthgate.start(["demo", "--db", database, "--quiet"])
        // The health devices' source lists five devices: a detail line of several hundred characters.
        // What the JSON report says: each plugin's details, and how many rows the table has.
        @Sendable func report() async -> (details: [String: [String: String]], plugins: Int)? {
            guard let status = try? await healthgate.run(["status", "--format", "json"]), status.status == 0,
                let json = try? JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any],
                let plugins = json["plugins"] as? [[String: Any]]
            else { return nil }
            var details: [String: [String: String]] = [:]
            for plugin in plugins {
                if let name = plugin["name"] as? String, let entries = plugin["details"] as? [String: String] { details[name] = entries }
            }
            return (details, plugins.count)
        }
        try await waitUntil(timeout: .seconds(60), "the health devices connected") {
            let details = await report()?.details["demo-health"] ?? [:]
            return details.filter { $0.key.hasSuffix(".state") }.count == 5
        }
        for (variables, width) in [([String: String](), 80), (["COLUMNS": "100"], 100)] {
            var reader = healthgate
            reader.environment.merge(variables) { $1 }
            // The details are live (a link comes up, a battery is read): the text is checked
            // against a JSON report read before it and again after it, unchanged in between.
            var agreed: (text: HealthgateExecutable.Result, details: [String: [String: String]], plugins: Int)?
            let deadline = ContinuousClock.now + .seconds(60)
            while agreed == nil, ContinuousClock.now < deadline {
                guard let before = await report() else { continue }
                let text = try await reader.run(["status"])
                guard let after = await report() else { continue }
                if before.details == after.details, before.plugins == after.plugins { agreed = (text, after.details, after.plugins) }
            }
            let (status, details, pluginCount) = try XCTUnwrap(agreed, "the status details did not stay still for one reading in 60 s")
            XCTAssertEqual(status.status, 0, status.standardError)
            let lines = status.standardOutput.split(separator: "\n").map(String.init)
            // After the table: each plugin's lines, its name first, then lines indented under it.
            let header = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("NAME ") }, status.standardOutput)
            let first = header + 1 + pluginCount
            var current: String?
            var collected: [String: String] = [:]
            for line in lines[first...] {
                XCTAssertLessThanOrEqual(line.count, width, line)
                if line.hasPrefix("    ") {
                    let name = try XCTUnwrap(current, line)
                    collected[name, default: ""] += " " + line.trimmingCharacters(in: .whitespaces)
                } else {
                    let name = String(line.prefix { $0 != ":" })
                    current = name
                    collected[name, default: ""] += " " + line.dropFirst(name.count + 2)
                }
            }
            XCTAssertGreaterThan(lines[first...].filter { $0.hasPrefix("    ") }.count, 2, status.standardOutput)
            for (name, entries) in details where !entries.isEmpty {
                let text = try XCTUnwrap(collected[name], "\(name) in \(status.standardOutput)")
                for (key, value) in entries {
                    // A value with spaces may have wrapped at one of them.
                    XCTAssertTrue(text.contains("\(key)=\(value)"), "\(key)=\(value) in \(text)")
                }
            }
        }
        try await daemon.terminate()
    }

    /// `query stats --interval minute --last 1h`, as the issue ran it: the minutes with data, not
    /// 58 rows of zeros (`--all` lists them); step sums in whole steps, while JSON keeps the
    /// proportional split, whose minutes add up to the range's total.
    func testSparseStatisticsShowTheIntervalsWithDataAndStepsAreWhole() async throws {
        let healthgate = try makeHealthgate()
        let database = healthgate.root.appendingPathComponent("stats.sqlite").path
        let demo = try await healthgate.run(["demo", "--duration", "8", "--db", database, "--quiet"])
        XCTAssertEqual(demo.status, 0, demo.standardError)

        let sparse = try await healthgate.run(["query", "stats", "--type", "heartRate", "--interval", "minute", "--last", "1h", "--db", database])
        XCTAssertEqual(sparse.status, 0, sparse.standardError)
        let rows = sparse.standardOutput.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        XCTAssertTrue((1...2).contains(rows.count), sparse.standardOutput)  // 8 s of data touch one or two minutes
        XCTAssertTrue(rows.allSatisfy { (Int($0[2]) ?? 0) > 0 }, sparse.standardOutput)
        let all = try await healthgate.run(["query", "stats", "--type", "heartRate", "--interval", "minute", "--last", "1h", "--all", "--db", database])
        XCTAssertEqual(all.status, 0, all.standardError)
        XCTAssertTrue((60...61).contains(all.standardOutput.split(separator: "\n").count - 1), all.standardOutput)
        let help = try await healthgate.run(["query", "stats", "--help"])
        XCTAssertTrue(help.standardOutput.contains("--all"), help.standardOutput)

        let steps = ["query", "stats", "--type", "stepCount", "--interval", "minute", "--last", "1h", "--db", database]
        let table = try await healthgate.run(steps)
        XCTAssertEqual(table.status, 0, table.standardError)
        let sums = table.standardOutput.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").last.map(String.init) }
        XCTAssertFalse(sums.isEmpty, table.standardOutput)
        XCTAssertTrue(sums.allSatisfy { Int($0) != nil }, "whole steps: \(table.standardOutput)")
        let json = try await healthgate.run(steps + ["--format", "json"])
        let minutes = try HealthJSON.makeDecoder().decode([QuantityStatistics].self, from: Data(json.standardOutput.utf8))
        XCTAssertEqual(minutes.map { String(Int(($0.sum ?? 0).rounded(.toNearestOrAwayFromZero))) }, sums)
        let total = try await healthgate.run(["query", "stats", "--type", "stepCount", "--last", "1h", "--db", database, "--format", "json"])
        let whole = try HealthJSON.makeDecoder().decode(QuantityStatistics.self, from: Data(total.standardOutput.utf8))
        XCTAssertEqual(minutes.compactMap(\.sum).reduce(0, +), try XCTUnwrap(whole.sum), accuracy: 1e-6)
    }

    /// The demo in a detached tmux session 80 columns wide, run until both heart-rate
    /// variability types have printed (the issue's `heartRateVariabilitySDNN26.422 ms`): every
    /// line of the pane, logs included, fits 80 columns; type names are whole; each value has its
    /// type's decimals.
    func testTheDemoInAnEightyColumnTmuxPane() async throws {
        let healthgate = try makeHealthgate()
        let (tmux, server) = try TmuxServer.start(in: healthgate.root)
        defer { tmux.stop(server) }
        let database = healthgate.root.appendingPathComponent("tmux.sqlite").path
        var command = ["env", "-u", "COLUMNS", "-u", "STATE_DIRECTORY", "-u", "RUNTIME_DIRECTORY"]
        for key in ["XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"] {
            command.append("\(key)=\(healthgate.environment[key] ?? "")")
        }
        command += [healthgate.url.path, "demo", "--db", database]
        // The pane's shell writes the demo's exit status to a file: tmux's own pane_dead_status
        // is empty when the pane's terminal closed before tmux reaped the process, as it does on
        // a loaded machine. The shell traps C-c (a handled signal is reset in the demo at exec;
        // an ignored one would be inherited), so it outlives the demo to write the status.
        let statusFile = healthgate.root.appendingPathComponent("demo.status").path
        let shell = "trap true INT; " + command.map(TmuxServer.quoted).joined(separator: " ")
            + "; echo $? > " + TmuxServer.quoted(statusFile)
        try tmux.run(["new-session", "-d", "-s", "demo", "-x", "80", "-y", "50", shell])
        XCTAssertEqual(try tmux.run(["display-message", "-p", "-t", "demo", "#{pane_width}"]).trimmingCharacters(in: .whitespacesAndNewlines), "80")

        // Heart-rate variability comes with the first minute of beats.
        do {
            try await waitUntil(timeout: .seconds(150), "both variability types in the pane") {
                let pane = try tmux.capture()
                if pane.contains("heartRateVariabilityRMSSD") { return true }
                try await Task.sleep(for: .milliseconds(500))  // between two captures, each a process
                return false
            }
        } catch {
            XCTFail("\(error); the pane: \((try? tmux.capture()) ?? "-")")
            throw error
        }
        try tmux.run(["send-keys", "-t", "demo", "C-c"])
        try await waitUntil(timeout: .seconds(60), "the demo to stop") {
            if FileManager.default.fileExists(atPath: statusFile),
                let text = try? String(contentsOfFile: statusFile, encoding: .utf8), text.hasSuffix("\n")
            {
                return true
            }
            try await Task.sleep(for: .milliseconds(200))
            return false
        }
        let status = try String(contentsOfFile: statusFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(status, "0", "the demo's exit status after C-c; the pane: \((try? tmux.capture()) ?? "-")")
        // -J joins the lines the terminal wrapped itself: a line printed too long shows whole.
        let pane = try tmux.capture()
        let seen = LiveOutputCheck.check(pane, width: 80)
        XCTAssertTrue(seen.isSuperset(of: ["heartRateVariabilitySDNN", "heartRateVariabilityRMSSD", "heartRate", "bloodGlucose"]), "\(seen)")
    }
}

/// Checks the demo's live lines: none wider than `width`, every type name whole and known,
/// every value with its type's decimals and in its canonical unit.
enum LiveOutputCheck {
    /// The type names seen.
    @discardableResult
    static func check(_ output: String, width: Int, file: StaticString = #filePath, line: UInt = #line) -> Set<String> {
        let known = Set(QuantityType.builtIn.map(\.identifier) + CorrelationType.builtIn.map(\.identifier) + ["heartbeatSeries", "workout"])
        var seen: Set<String> = []
        var liveLines = 0
        for text in output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = String(text.reversed().drop { $0 == " " }.reversed())
            XCTAssertLessThanOrEqual(trimmed.count, width, "too wide: \(trimmed)", file: file, line: line)
            // A live line starts with its time, HH:MM:SS.
            guard trimmed.count > 10, trimmed.prefix(8).enumerated().allSatisfy({ $0.offset % 3 == 2 ? $0.element == ":" : $0.element.isNumber }),
                trimmed.dropFirst(8).hasPrefix("  ")
            else { continue }
            liveLines += 1
            let fields = trimmed.dropFirst(10).split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 3 else {
                XCTFail("a live line without a type, value and unit: \(trimmed)", file: file, line: line)
                continue
            }
            let (name, value, unit) = (fields[0], fields[1], fields[2])
            XCTAssertTrue(known.contains(name), "a cut or unknown type name: \(trimmed)", file: file, line: line)
            seen.insert(name)
            let types: [QuantityType]
            if let type = QuantityType.named(name) {
                types = [type]
            } else if name == "bloodPressure" {
                types = [.bloodPressureSystolic, .bloodPressureDiastolic]
            } else {
                continue
            }
            let parts = value.split(separator: "/").map(String.init)
            XCTAssertEqual(parts.count, types.count, trimmed, file: file, line: line)
            for (part, type) in zip(parts, types) {
                let decimals = part.split(separator: ".", omittingEmptySubsequences: false).dropFirst().first?.count ?? 0
                XCTAssertEqual(decimals, type.fractionDigits, "\(type) has \(type.fractionDigits) decimals: \(trimmed)", file: file, line: line)
                XCTAssertNotNil(Double(part), trimmed, file: file, line: line)
            }
            XCTAssertEqual(unit, types[0].canonicalUnit.unitString, trimmed, file: file, line: line)
        }
        XCTAssertGreaterThan(liveLines, 10, output, file: file, line: line)
        return seen
    }
}

/// A tmux server of the test's own, on a private socket, run in the foreground (`-D`): so it
/// needs no daemon(3) (which fails where /dev/null is no device) and ends with the test. The
/// value runs tmux commands against it; the server's process is the caller's, to stop with
/// ``stop(_:)``.
struct TmuxServer: Sendable {
    let socket: String
    let tmux: String

    /// Starts the server, or skips the test, saying why, when tmux cannot run. Returns the
    /// server's process id, for ``stop(_:)``.
    static func start(in directory: URL) throws -> (TmuxServer, pid_t) {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/tmux" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tmux = path else {
            throw XCTSkip("tmux is not installed (scripts/install-dependencies --test installs it)")
        }
        let socket = directory.appendingPathComponent("tmux.sock").path
        let configuration = directory.appendingPathComponent("tmux.conf")
        // The whole output stays in the history; the pane stays after the demo exits, to be read.
        try "set -g history-limit 100000\nset -g remain-on-exit on\nset -g exit-empty off\n"
            .write(to: configuration, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("tmux-server.log").path
        let pid = try spawnWithDefaultSignals(tmux, ["-S", socket, "-f", configuration.path, "-D"], errors: log)
        let server = TmuxServer(socket: socket, tmux: tmux)
        // The server is up once its socket answers.
        let deadline = Date().addingTimeInterval(10)
        while (try? server.run(["list-sessions"])) == nil {
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == 0, Date() < deadline else {
                server.stop(pid)
                let reason = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw XCTSkip("tmux cannot run: its server did not start (\(reason.isEmpty ? "no message" : reason))")
            }
            usleep(20_000)
        }
        return (server, pid)
    }

    /// Starts `path` with every signal unblocked and at its default action. A process the test
    /// runner starts with Foundation's Process inherits the runner thread's blocked signals,
    /// and a tmux server that never sees SIGCHLD neither reaps its panes nor stops on SIGTERM.
    private static func spawnWithDefaultSignals(_ path: String, _ arguments: [String], errors: String) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = environment["TERM"] ?? "xterm-256color"
        environment["TMUX"] = nil
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw XCTSkip("tmux cannot run: posix_spawn failed with errno \(result)") }
        return pid
    }

    /// Runs a tmux command against this server; throws when it fails.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let result = try runProcess(tmux, ["-S", socket] + arguments)
        guard result.status == 0 else { throw TmuxFailed(arguments: arguments, message: result.error) }
        return result.output
    }

    /// The pane's whole history and screen, with the lines the terminal wrapped joined.
    func capture() throws -> String {
        try run(["capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "demo"])
    }

    /// Ends the server (and with it the demo, if it still runs) and reaps it.
    func stop(_ pid: pid_t) {
        _ = try? run(["kill-server"])
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == 0 {
            kill(pid, SIGTERM)
            waitpid(pid, &status, 0)
        }
    }

    /// A word for the shell tmux runs the command with.
    static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    struct TmuxFailed: Error, CustomStringConvertible {
        var arguments: [String]
        var message: String
        var description: String { "tmux \(arguments.joined(separator: " ")) failed: \(message)" }
    }
}

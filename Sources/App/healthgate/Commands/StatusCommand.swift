import HealthStore
import SampleBus
import FoundationEssentials
import GatewayControl
import HealthModel
import GatewayRuntime

/// `healthgate status`: per-plugin status from the running daemon.
enum StatusCommand {
    static let command = Command(
        name: "status", summary: "Show per-plugin status from the running daemon.",
        usage: "status [--config FILE | --socket PATH] [--format table|json]",
        discussion: """
            Asks the running daemon over its control socket: --socket, else the controlSocket of \
            the configuration (--config, else the one 'healthgate run' finds), else \
            $XDG_RUNTIME_DIR/healthgate/control.sock ($RUNTIME_DIRECTORY/control.sock under \
            systemd). Exits 69 when no daemon is running. A plugin's details follow the table, \
            wrapped to the terminal's width (80 columns when stdout is no terminal).

            The "store migration" line shows the background migration of a store written by an \
            earlier healthgate, a step each with the rows done of its total ("heartbeats 1200/4000, \
            workout_samples 0/90000, running"); "finished" once every step has. A store created by \
            this version has nothing to move and no such line. JSON: "migration", each step's \
            "step", "done", "total", "finished", "started" and "finishedAt".

            A "previous run" line follows when the run before this one did not stop cleanly: \
            "crashed (SIGSEGV) at <time>" when a fatal signal left its mark, else "ended \
            without a clean stop" (SIGKILL, a power cut), with that run's pid and start. JSON: \
            "previousRun" with "pid", "startedAt", "ended" ("crash" or "unclean"), "signal" and \
            "crashedAt".

            Status never waits on the store's disk: it says what the store, the writer and the \
            followers last published. A "store: STUCK" line says since when the store has not \
            answered (a read or a write of it has taken more than 2 s); JSON: "storeStuckSince".
            """,
        options: [
            OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json."),
        ] + ControlSocketPath.options
    ) { arguments, context in
        let format = try arguments.format(among: ["table", "json"])
        let result = try await ControlSocketPath.send("status", arguments: .object([:]), options: arguments, context: context)
        if format == "json" {
            let data = try HealthJSON.makeEncoder(pretty: true).encode(result)
            context.print(String(decoding: data, as: UTF8.self))
            return .success
        }
        let report = try result.decode(StatusReport.self)
        context.print("healthgate \(report.version), pid \(report.pid), up since \(RFC3339.string(from: report.startedAt)), config \(report.configuration)")
        if let previous = report.previousRun { context.print("previous run: \(previous.text)") }
        if let clock = report.clock { context.print("clock: \(clock)") }
        if let since = report.storeStuckSince {
            context.print(
                "store: STUCK: not answering since \(RFC3339.string(from: since)) "
                    + "(\(Int(Date().timeIntervalSince(since).rounded())) s); what follows is what it last published")
        }
        // A store created by this version has nothing to move: no line for it.
        if let steps = report.migration, steps.contains(where: { $0.total > 0 }) {
            context.print("store migration: " + migrationText(steps))
        }
        context.print("watchdog: " + WatchdogLine.text(report.watchdog))
        if let counts = report.heartRate {
            context.print(
                "heart rate: \(String(count: counts.droppedReadings, "reading")) dropped as a second path's copy, "
                    + "\(String(count: counts.handovers, "handover")) between paths")
        }
        if let counts = report.attribution {
            let reasons = counts.unattributed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            context.print(
                "attribution: \(String(count: counts.attributed, "reading")) attributed, "
                    + "\(counts.unattributedTotal) unattributed since the start"
                    + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))")
                    + (counts.erased == 0 ? "" : ", \(String(count: counts.erased, "reading")) of erased people not stored"))
        }
        let rows = report.plugins.map { status -> [String] in
            [status.name, status.kind, status.role.rawValue, status.state.rawValue, String(status.records),
             String(status.dropped), String(status.restarts),
             status.lastRecordDate.map { RFC3339.string(from: $0) } ?? "-",
             status.lastError ?? "-"]
        }
        context.print(TextTable.render(
            header: ["NAME", "KIND", "ROLE", "STATE", "RECORDS", "DROPPED", "RESTARTS", "LAST RECORD", "LAST ERROR"],
            rows: rows))
        // A plugin's further lines wrap to the terminal, indented under their plugin's name.
        let wrapping = TextWrapping(width: context.columns, indent: 4)
        for status in report.plugins {
            if let reason = status.waitingFor {
                for line in wrapping.lines(label: "\(status.name): ", ["waiting for \(reason)"]) { context.print(line) }
            }
        }
        for status in report.plugins where !status.details.isEmpty {
            let entries = status.details.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            for line in wrapping.lines(label: "\(status.name): ", entries) { context.print(line) }
        }
        return .success
    }

    /// `heartbeats 1200/4000, workout_samples 0/90000, running`; `finished` at the end when every
    /// step has.
    static func migrationText(_ steps: [StatusReport.MigrationStep]) -> String {
        steps.map { "\($0.step) \($0.done)/\($0.total)" }.joined(separator: ", ")
            + (steps.allSatisfy(\.finished) ? ", finished" : ", running")
    }
}

/// The `watchdog:` line of `healthgate status`.
enum WatchdogLine {
    static func text(_ watchdog: WatchdogReport?) -> String {
        guard let watchdog else { return "off (systemd does not watch this daemon: no WatchdogSec=)" }
        let every = "WatchdogSec \(ConfigurationDecoder.format(watchdog.timeoutSeconds)) s, checked every \(ConfigurationDecoder.format(watchdog.timeoutSeconds / 2)) s"
        if let reason = watchdog.withheld {
            let since = watchdog.withheldSince.map { " since \(RFC3339.string(from: $0))" } ?? ""
            return "pings WITHHELD\(since) (\(every)): \(reason)"
        }
        let last = watchdog.lastPing.map { "last ping \(RFC3339.string(from: $0))" } ?? "no ping yet"
        return "pinging (\(every)), \(last), \(String(count: watchdog.pings, "ping"))"
    }
}

/// Talking to the daemon from the CLI.
enum ControlSocketPath {
    /// The options of every command that talks to the daemon: `--socket`, and `--config` for
    /// the configuration whose `controlSocket` it is.
    static let options = [
        OptionSpec(
            name: "socket", value: "PATH",
            help: "The daemon's control socket (default: the configuration's controlSocket, else the runtime directory's control.sock)."),
        ConfigurationLocator.option,
        OptionSpec(
            name: "timeout", value: "SECONDS",
            help: "How long to wait for the daemon's answer (default \(ConfigurationDecoder.format(ControlClient.defaultTimeout.seconds))); "
                + "when it runs out, exit 75: the daemon may still carry the command out."),
    ]

    /// How long a command waits for the daemon's answer: `--timeout SECONDS` (more than 0, at
    /// most an hour), else ``ControlClient/defaultTimeout``.
    /// - Throws: a usage error (64) naming the option for any other value.
    static func timeout(_ options: ParsedArguments) throws(CommandError) -> Duration {
        guard let seconds = try options.double("timeout") else { return ControlClient.defaultTimeout }
        guard seconds > 0, seconds <= 3600 else {
            throw CommandError(.usage, "--timeout must be more than 0 and at most 3600 seconds, got \(options.value("timeout") ?? "")")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// The control socket path: `--socket`, else the `controlSocket` of the configuration
    /// (`--config`, else the one `healthgate run` finds), else the runtime directory's.
    /// - Throws: the configuration's errors (66 for a missing `--config` file, 78 for a wrong one).
    static func resolve(_ options: ParsedArguments, context: CommandContext) throws -> String {
        if let explicit = options.value("socket") { return explicit }
        if let configured = try ConfigurationLocator.load(options, context: context).controlSocket {
            return configured
        }
        return context.paths.runtimeDirectory.appendingPathComponent("control.sock").path
    }

    /// Sends one command to the daemon ``resolve(_:context:)`` finds from the command's
    /// `options`, and returns its result, mapping failures to exit codes: no daemon → 69, a
    /// request the daemon took and did not answer in time → 75 (it may still carry it out), a
    /// refused command → 65.
    static func send(
        _ command: String, arguments: JSONValue, options: ParsedArguments, context: CommandContext
    ) async throws -> JSONValue {
        let path = try resolve(options, context: context)
        let client = ControlClient(path: path, timeout: try timeout(options))
        let response: ControlResponse
        do {
            response = try await client.send(ControlRequest(command: command, arguments: arguments))
        } catch let error as ControlSocketError where error.meansNoDaemon {
            throw CommandError(.unavailable, "healthgate is not running (no daemon listening on \(path))")
        } catch let error as ControlSocketError where error.meansUnanswered {
            throw CommandError(
                .temporaryFailure,
                "the daemon on \(path) took '\(command)' but did not answer within \(ConfigurationDecoder.format(client.timeout.seconds)) s (--timeout): "
                    + "it may still carry it out; 'healthgate status' shows what it did")
        } catch {
            throw CommandError(.unavailable, "cannot reach the daemon: \(error)")
        }
        guard response.ok, let result = response.result else {
            throw CommandError(.dataError, response.error ?? "the daemon refused '\(command)'")
        }
        return result
    }
}

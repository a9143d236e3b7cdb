import FoundationEssentials
import HealthModel
import GatewayRuntime
import SampleBus
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// A command or command group of the `healthgate` executable.
///
/// A leaf command has `run`; a group has `subcommands`. `healthgate COMMAND --help` prints
/// `usage`, `discussion` and the options, generated from this value, so help and parsing never
/// disagree.
struct Command: Sendable {
    var name: String
    var summary: String
    /// The synopsis after `healthgate`, e.g. `units convert VALUE FROM TO`.
    var usage: String
    /// Extra help text: what the command does, examples, exit statuses.
    var discussion: String = ""
    var options: [OptionSpec] = []
    var subcommands: [Command] = []
    var run: (@Sendable (ParsedArguments, CommandContext) async throws -> ExitCode)?

    init(
        name: String, summary: String, usage: String, discussion: String = "",
        options: [OptionSpec] = [], subcommands: [Command] = [],
        run: (@Sendable (ParsedArguments, CommandContext) async throws -> ExitCode)? = nil
    ) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.discussion = discussion
        self.options = options
        self.subcommands = subcommands
        self.run = run
    }

    /// The positional arguments, as ``usage`` names them (``PositionalSpec/named(in:)``).
    var positionals: [PositionalSpec] { PositionalSpec.named(in: usage) }

    /// The help text.
    func help(path: String) -> String {
        var text = "USAGE: healthgate \(usage)\n\n\(summary)\n"
        if !discussion.isEmpty { text += "\n\(discussion)\n" }
        if !subcommands.isEmpty {
            text += "\nSUBCOMMANDS:\n"
            let width = subcommands.map(\.name.count).max() ?? 0
            for sub in subcommands {
                text += "  \(sub.name.padded(toLength: width + 2))\(sub.summary)\n"
            }
            text += "\nSee 'healthgate \(path.isEmpty ? "COMMAND" : path + " SUBCOMMAND") --help'.\n"
        }
        let all = options + [OptionSpec(name: "help", value: nil, help: "Show this help.")]
        text += "\nOPTIONS:\n"
        let labels = all.map { "--\($0.name)" + ($0.value.map { " \($0)" } ?? "") }
        let width = labels.map(\.count).max() ?? 0
        for (label, option) in zip(labels, all) {
            text += "  \(label.padded(toLength: width + 2))\(option.help)\n"
        }
        return text
    }
}

/// What a command gets: the process environment, output streams and resolved paths. Injected, so
/// tests can run commands in-process.
struct CommandContext: Sendable {
    var variables: [String: String]
    var output: OutputStream
    var errors: OutputStream
    var clock: any GatewayClock
    /// Whether stdout is a terminal (for live views and colours).
    var stdoutIsTerminal: Bool
    /// Whether stdin is a terminal, so a destructive command can ask (``Confirmation``).
    var stdinIsTerminal = false
    /// The width of the terminal stdout is, asked at each call (a window can be resized); nil
    /// when stdout is no terminal.
    var terminalColumns: @Sendable () -> Int? = { nil }
    /// The width of the terminal stderr is, asked at each call; nil when stderr is no terminal.
    var errorColumns: @Sendable () -> Int? = { nil }

    /// Writes a line to stdout.
    func print(_ text: String) { output.write(text + "\n") }
    /// Writes a line to stderr.
    func printError(_ text: String) { errors.write(text + "\n") }
    /// Writes a line meant for people to stderr, wrapped at its spaces to stderr's terminal (not
    /// wrapped when stderr is no terminal).
    func printNote(_ text: String) {
        guard let width = errorColumns() else { return printError(text) }
        printError(TextWrapping(width: width, indent: 4).lines(text).joined(separator: "\n"))
    }

    /// How wide lines meant for people may be: the terminal's width, else `$COLUMNS`, else 80.
    var columns: Int {
        if let columns = terminalColumns() { return columns }
        if let text = variables["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        return 80
    }

    /// The XDG and systemd directories.
    var paths: GatewayPaths { XDGPaths.resolve(variables) }
}

/// A line-oriented output stream over a file descriptor.
struct OutputStream: Sendable {
    let descriptor: Int32

    static let standardOutput = OutputStream(descriptor: 1)
    static let standardError = OutputStream(descriptor: 2)

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }
}

/// Resolves the gateway's directories from the XDG Base Directory specification, preferring the
/// directories systemd passes to services (`STATE_DIRECTORY`, `RUNTIME_DIRECTORY`, …).
enum XDGPaths {
    // Paths as text, joined with FileSystem.join: no URL is parsed on the way to a running
    // gateway (see GatewayPaths).
    static func resolve(_ env: [String: String]) -> GatewayPaths {
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ProcessControl.homeDirectory()
        func directory(_ systemd: String, _ xdg: String, _ fallback: String) -> String {
            if let value = env[systemd], !value.isEmpty {
                // systemd may pass several colon-separated directories; the first is ours.
                return withoutTrailingSlash(String(value.split(separator: ":")[0]))
            }
            if let value = env[xdg], value.hasPrefix("/") {
                return FileSystem.join(value, "healthgate")
            }
            return FileSystem.join(FileSystem.join(home, fallback), "healthgate")
        }
        let runtime: String
        if let value = env["RUNTIME_DIRECTORY"], !value.isEmpty {
            runtime = withoutTrailingSlash(String(value.split(separator: ":")[0]))
        } else if let value = env["XDG_RUNTIME_DIR"], value.hasPrefix("/") {
            runtime = FileSystem.join(value, "healthgate")
        } else {
            // No XDG_RUNTIME_DIR (e.g. a cron job or sudo): fall back to a per-user directory in /tmp.
            runtime = "/tmp/healthgate-\(getuid())"
        }
        return GatewayPaths(
            dataPath: directory("STATE_DIRECTORY", "XDG_DATA_HOME", ".local/share"),
            statePath: directory("STATE_DIRECTORY", "XDG_STATE_HOME", ".local/state"),
            runtimePath: runtime)
    }

    /// `path` without trailing slashes, as a file URL's `path` gives it.
    static func withoutTrailingSlash(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }
}

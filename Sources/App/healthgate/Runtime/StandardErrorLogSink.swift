import FoundationEssentials
import HealthModel
import GatewayRuntime
import Synchronization

/// Writes log entries to stderr, one line each.
///
/// Under systemd (`JOURNAL_STREAM` set) lines carry the sd-daemon(3) `<N>` priority prefix and
/// no timestamp, so journald records the right priority; otherwise they start with an RFC 3339
/// time and the level. Lines that concern a device name it in brackets. On a terminal, a line
/// wider than the terminal is wrapped at its spaces, continuation lines indented; in a pipe, a
/// file or the journal every entry stays one line.
final class StandardErrorLogSink: LogSink {
    private let journal: Bool
    private let lock = Mutex(())
    private let stream: OutputStream
    private let columns: @Sendable () -> Int?

    /// `columns` is the width of the terminal stderr is (nil: no terminal, no wrapping).
    init(variables: [String: String], stream: OutputStream = .standardError, columns: @escaping @Sendable () -> Int? = { nil }) {
        self.journal = variables["JOURNAL_STREAM"] != nil
        self.stream = stream
        self.columns = columns
    }

    /// A sink for a command's logs: stderr, wrapped to its terminal.
    convenience init(context: CommandContext) {
        self.init(variables: context.variables, columns: context.errorColumns)
    }

    func write(_ entry: LogEntry) {
        let device = entry.device.map { " [\($0)]" } ?? ""
        let line = journal
            ? "<\(entry.level.syslogPriority)>\(entry.label):\(device) \(entry.message)\n"
            : "\(RFC3339.string(from: entry.date).prefix(23))Z \(entry.level.rawValue.uppercased()) \(entry.label):\(device) \(entry.message)\n"
        let text = journal ? line : columns().map { width in
            TextWrapping(width: width, indent: 4).lines(String(line.dropLast())).joined(separator: "\n") + "\n"
        } ?? line
        lock.withLock { _ in stream.write(text) }
    }
}

import FoundationEssentials
import HealthModel
import GatewayRuntime
import Synchronization

/// Writes log entries to stderr, one line each.
///
/// Under systemd (`JOURNAL_STREAM` set) lines carry the sd-daemon(3) `<N>` priority prefix and
/// no timestamp, so journald records the right priority; otherwise they start with an RFC 3339
/// time and the level. Lines that concern a device name it in brackets.
final class StandardErrorLogSink: LogSink {
    private let journal: Bool
    private let lock = Mutex(())
    private let stream: OutputStream

    init(variables: [String: String], stream: OutputStream = .standardError) {
        self.journal = variables["JOURNAL_STREAM"] != nil
        self.stream = stream
    }

    func write(_ entry: LogEntry) {
        let device = entry.device.map { " [\($0)]" } ?? ""
        let line = journal
            ? "<\(entry.level.syslogPriority)>\(entry.label):\(device) \(entry.message)\n"
            : "\(RFC3339.string(from: entry.date).prefix(23))Z \(entry.level.rawValue.uppercased()) \(entry.label):\(device) \(entry.message)\n"
        lock.withLock { _ in stream.write(line) }
    }
}

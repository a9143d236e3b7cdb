public import FoundationEssentials

/// Severity of a log entry, ordered; the syslog priorities used by journald in brackets.
public enum LogLevel: String, Hashable, Sendable, Codable, Comparable, CaseIterable {
    case debug, info, notice, warning, error

    /// The syslog priority (sd-daemon(3) prefix `<N>`).
    public var syslogPriority: Int {
        switch self {
        case .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.syslogPriority > rhs.syslogPriority
    }
}

/// One log line, with the device it concerns when there is one.
public struct LogEntry: Sendable, Hashable {
    public var date: Date
    public var level: LogLevel
    /// The component: the plugin instance name, or a core module.
    public var label: String
    public var message: String
    /// The device the entry is about (its display name), so that logs name the device.
    public var device: String?

    public init(date: Date, level: LogLevel, label: String, message: String, device: String? = nil) {
        self.date = date
        self.level = level
        self.label = label
        self.message = message
        self.device = device
    }
}

/// Where log entries go. Implementations must be thread-safe.
public protocol LogSink: Sendable {
    func write(_ entry: LogEntry)
}

/// A lightweight logger handed to every component (swift-log's rule: libraries accept a logger,
/// they never make one). Copy it freely; `child(_:)` adds a label component.
public struct Logger: Sendable {
    public let label: String
    public let level: LogLevel
    private let sink: any LogSink

    public init(label: String, sink: any LogSink, level: LogLevel = .info) {
        self.label = label
        self.sink = sink
        self.level = level
    }

    /// A logger for a sub-component: `gateway` → `gateway/sqlite`.
    public func child(_ component: String) -> Logger {
        Logger(label: label.isEmpty ? component : "\(label)/\(component)", sink: sink, level: level)
    }

    /// The same logger with another minimum level.
    public func with(level: LogLevel) -> Logger {
        Logger(label: label, sink: sink, level: level)
    }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, device: String? = nil) {
        guard level >= self.level else { return }
        sink.write(LogEntry(date: Date(), level: level, label: label, message: message(), device: device))
    }

    public func debug(_ message: @autoclosure () -> String, device: String? = nil) {
        log(.debug, message(), device: device)
    }
    public func info(_ message: @autoclosure () -> String, device: String? = nil) {
        log(.info, message(), device: device)
    }
    public func notice(_ message: @autoclosure () -> String, device: String? = nil) {
        log(.notice, message(), device: device)
    }
    public func warning(_ message: @autoclosure () -> String, device: String? = nil) {
        log(.warning, message(), device: device)
    }
    public func error(_ message: @autoclosure () -> String, device: String? = nil) {
        log(.error, message(), device: device)
    }
}

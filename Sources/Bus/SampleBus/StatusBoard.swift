public import FoundationEssentials
import Synchronization

/// Whether a plugin is a source or a sink.
public enum PluginRole: String, Hashable, Sendable, Codable {
    case source, sink
}

/// The life-cycle state of a supervised plugin.
public enum PluginState: String, Hashable, Sendable, Codable {
    case starting, running, restarting, finished, stopped
    /// Running, but waiting for something outside the gateway that it cannot work without (a
    /// Bluetooth source without dbus, bluetoothd or an adapter); ``PluginStatus/waitingFor``
    /// says what and how to fix it.
    case waiting
}

/// A plugin's status, as `healthgate status` shows it.
public struct PluginStatus: Hashable, Sendable, Codable {
    public var name: String
    public var kind: String
    public var role: PluginRole
    public var state: PluginState
    /// Records published (sources) or written (sinks).
    public var records: Int
    /// The end date of the newest record handled.
    public var lastRecordDate: Date?
    public var lastError: String?
    public var lastErrorDate: Date?
    /// While the state is ``PluginState/waiting``: what the plugin waits for, and the fix.
    public var waitingFor: String?
    public var errors: Int
    /// Records dropped: by a sink queue's `dropOldest` policy, or by the plugin itself.
    public var dropped: Int
    public var restarts: Int
    /// Plugin-specific facts: a device's battery level, a connection state, an outbox depth.
    public var details: [String: String]
    /// The plugin's own numbers for monitoring (`GET /metrics`): a device's link state, losses
    /// and battery, an adapter's links and power cycles. Not part of `status` (its details say
    /// the same in words).
    public var metrics: [MetricSeries: Double] = [:]

    enum CodingKeys: String, CodingKey {
        case name, kind, role, state, records, lastRecordDate, lastError, lastErrorDate, waitingFor, errors, dropped, restarts,
            details
    }

    public init(name: String, kind: String, role: PluginRole) {
        self.name = name
        self.kind = kind
        self.role = role
        self.state = .starting
        self.records = 0
        self.errors = 0
        self.dropped = 0
        self.restarts = 0
        self.details = [:]
    }
}

/// One time series a plugin reports: a metric family's name (Prometheus conventions:
/// `healthgate_device_link_losses_total`) and its labels.
public struct MetricSeries: Hashable, Sendable {
    public var name: String
    public var labels: [String: String]

    public init(_ name: String, _ labels: [String: String] = [:]) {
        self.name = name
        self.labels = labels
    }
}

/// Every plugin's status, updated by plugins and the supervisor, read by the control socket.
public final class StatusBoard: Sendable {
    private let statuses = Mutex<[String: PluginStatus]>([:])
    private let order = Mutex<[String]>([])

    public init() {}

    /// Registers a plugin and returns the handle it reports through.
    public func register(name: String, kind: String, role: PluginRole) -> StatusReporter {
        statuses.withLock { $0[name] = PluginStatus(name: name, kind: kind, role: role) }
        order.withLock { $0.append(name) }
        return StatusReporter(board: self, name: name)
    }

    /// All statuses in registration order.
    public func snapshot() -> [PluginStatus] {
        let names = order.withLock { $0 }
        return statuses.withLock { statuses in names.compactMap { statuses[$0] } }
    }

    /// One plugin's status.
    public func status(of name: String) -> PluginStatus? {
        statuses.withLock { $0[name] }
    }

    func update(_ name: String, _ change: (inout PluginStatus) -> Void) {
        statuses.withLock { statuses in
            // Mutated in place: copying the entry out made every change copy its `details`
            // dictionary (thousands of entries with many devices), O(n) per update.
            guard let index = statuses.index(forKey: name) else { return }
            change(&statuses.values[index])
        }
    }
}

/// A plugin's handle on its own status entry. Cheap to copy; thread-safe.
public struct StatusReporter: Sendable {
    let board: StatusBoard
    /// The plugin instance name.
    public let name: String

    /// Counts handled records and remembers the newest record date.
    public func recordsHandled(_ count: Int, lastDate: Date?) {
        board.update(name) { status in
            status.records += count
            if let lastDate, lastDate > (status.lastRecordDate ?? .distantPast) {
                status.lastRecordDate = lastDate
            }
        }
    }

    /// Records an error without stopping the plugin (a bad frame, a failed request).
    public func reportError(_ message: String, at date: Date = Date()) {
        board.update(name) { status in
            status.lastError = message
            status.lastErrorDate = date
            status.errors += 1
        }
    }

    /// Says the plugin, while running, waits for `reason` (state ``PluginState/waiting``), or,
    /// with nil, that it no longer waits (state `running` again). Ignored while the plugin is
    /// not running: a restart or a stop says more.
    public func waiting(for reason: String?) {
        board.update(name) { status in
            if let reason, status.state == .running || status.state == .waiting {
                status.state = .waiting
                status.waitingFor = reason
            } else if reason == nil, status.state == .waiting {
                status.state = .running
                status.waitingFor = nil
            }
        }
    }

    /// Clears the last error once the condition has passed.
    public func clearError() {
        board.update(name) { $0.lastError = nil }
    }

    /// Counts dropped records: ones the plugin itself dropped (e.g. a zero heart rate without
    /// contact), and, for a sink, ones its queue's `dropOldest` policy evicted.
    public func recordsDropped(_ count: Int) {
        board.update(name) { $0.dropped += count }
    }

    /// Sets or removes a detail shown by `healthgate status`.
    public func setDetail(_ key: String, _ value: String?) {
        board.update(name) { $0.details[key] = value }
    }

    /// Sets (or, with nil, removes) one of the plugin's numbers for monitoring.
    public func setMetric(_ name: String, _ labels: [String: String] = [:], _ value: Double?) {
        board.update(self.name) { $0.metrics[MetricSeries(name, labels)] = value }
    }

    func setState(_ state: PluginState) {
        board.update(name) { status in
            status.state = state
            status.waitingFor = nil
        }
    }

    func countRestart() {
        board.update(name) { $0.restarts += 1 }
    }

    /// The current status.
    public var current: PluginStatus? { board.status(of: name) }
}

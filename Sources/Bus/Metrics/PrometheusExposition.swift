import FoundationEssentials
public import GatewayRuntime
public import GatewayTime
import HealthStore
public import SampleBus

/// The gateway's numbers in Prometheus' text exposition format (version 0.0.4), as `GET /metrics`
/// serves them: every plugin's records, drops, errors, restarts and whether it runs; each sink
/// queue's depth; each store follower's lag in changes and seconds and its dead letters; each
/// device's link state, connections, losses and battery and each adapter's links, slots and power
/// cycles (what the Bluetooth sources report through ``StatusReporter/setMetric(_:_:_:)``); the
/// store's latest anchor and its background migration's steps; the clock's synchronisation; and
/// systemd's watchdog.
///
/// Names and labels follow Prometheus' conventions: `healthgate_` prefix, base units (seconds,
/// ratios), `_total` on counters, one HELP and TYPE line per family.
public struct GatewayMetrics: Sendable {
    public let statusBoard: StatusBoard
    /// What the store last published (``SampleBus/StoreFactsWatch``); nil: no store.
    public let storeFacts: StoreFactsWatch?
    public let clockTrust: any ClockTrust
    public let clock: any GatewayClock
    /// Each sink queue's depth (the gateway's, once it runs).
    public let queueDepths: @Sendable () -> [(sink: String, depth: Int)]
    /// The heart-rate arbiter whose drops and handovers are exposed; nil: none.
    public let heartRateArbiter: HeartRateArbiter?
    /// systemd's watchdog now; nil when systemd does not watch the gateway.
    public let watchdog: @Sendable () -> WatchdogReport?

    public init(
        statusBoard: StatusBoard, storeFacts: StoreFactsWatch?, clockTrust: any ClockTrust, clock: any GatewayClock,
        queueDepths: @escaping @Sendable () -> [(sink: String, depth: Int)], heartRateArbiter: HeartRateArbiter? = nil,
        watchdog: @escaping @Sendable () -> WatchdogReport? = { nil }
    ) {
        self.heartRateArbiter = heartRateArbiter
        self.watchdog = watchdog
        self.statusBoard = statusBoard
        self.storeFacts = storeFacts
        self.clockTrust = clockTrust
        self.clock = clock
        self.queueDepths = queueDepths
    }

    /// The content type of ``render()``'s text.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A metric family: its name, type and help text.
    public struct Family: Sendable, Hashable {
        public var name: String
        public var type: String
        public var help: String
    }

    /// Every family the gateway exposes, in the order they are written. A plugin's own numbers
    /// (``PluginStatus/metrics``) must use one of these names; others are not exposed.
    public static let families: [Family] = [
        Family(name: "healthgate_plugin_up", type: "gauge", help: "1 while the plugin runs, 0 when it restarts, finished or stopped."),
        Family(name: "healthgate_plugin_records_total", type: "counter", help: "Records published (sources) or written (sinks)."),
        Family(name: "healthgate_plugin_dropped_records_total", type: "counter", help: "Records dropped by the plugin or its sink queue."),
        Family(name: "healthgate_plugin_errors_total", type: "counter", help: "Errors the plugin reported without stopping."),
        Family(name: "healthgate_plugin_restarts_total", type: "counter", help: "Times the supervisor restarted the plugin."),
        Family(name: "healthgate_sink_queue_records", type: "gauge", help: "Records waiting in the sink's queue."),
        Family(name: "healthgate_follower_lag_records", type: "gauge", help: "Store changes the follower has not sent yet."),
        Family(name: "healthgate_follower_lag_seconds", type: "gauge", help: "Age of the oldest store commit the follower has not sent (0 when none)."),
        Family(name: "healthgate_follower_lag_bytes", type: "gauge", help: "Estimated bytes of the store commits the follower has not sent."),
        Family(name: "healthgate_follower_dead_letters", type: "gauge", help: "Records the receiver refused, kept for a retry."),
        Family(
            name: "healthgate_follower_pause_seconds", type: "gauge",
            help: "Seconds until the receiver's Retry-After lets the follower send again (0 when not paused)."),
        Family(name: "healthgate_device_connected", type: "gauge", help: "1 while the gateway holds a link to the device."),
        Family(name: "healthgate_device_connections_total", type: "counter", help: "Links the gateway made to the device."),
        Family(name: "healthgate_device_link_losses_total", type: "counter", help: "Links to the device that were lost."),
        Family(name: "healthgate_device_battery_ratio", type: "gauge", help: "The device's battery level, 0 to 1."),
        Family(name: "healthgate_device_bad_payloads_total", type: "counter", help: "Payloads from the device that did not decode."),
        Family(name: "healthgate_adapter_links", type: "gauge", help: "Links held on the Bluetooth adapter."),
        Family(name: "healthgate_adapter_link_slots", type: "gauge", help: "Links the adapter may hold at once (bluetooth.adapterLimits.connections)."),
        Family(name: "healthgate_adapter_devices", type: "gauge", help: "Devices followed on the adapter."),
        Family(name: "healthgate_adapter_waiting_devices", type: "gauge", help: "Devices waiting for a connection attempt on the adapter."),
        Family(name: "healthgate_adapter_slot_waiting_devices", type: "gauge", help: "Devices the adapter hears that wait for a free device slot (every adapter that hears them is full)."),
        Family(name: "healthgate_adapter_power_cycles_total", type: "counter", help: "Times the gateway power-cycled the adapter."),
        Family(
            name: "healthgate_heart_rate_dropped_readings_total", type: "counter",
            help: "Heart-rate readings and series dropped because another path of the same wearer fed them (one strap heard twice)."),
        Family(name: "healthgate_heart_rate_handovers_total", type: "counter", help: "Times a wearer's heart rate passed from one path to another."),
        Family(name: "healthgate_store_latest_anchor", type: "gauge", help: "The latest anchor of the store's change log."),
        Family(
            name: "healthgate_store_stuck_seconds", type: "gauge",
            help: "How long the store has not answered (a read or a write of it taking over 2 s); 0 while it answers."),
        Family(
            name: "healthgate_store_migration_rows", type: "gauge",
            help: "Rows a step of the store's background migration has to handle, counted when the upgrade began."),
        Family(name: "healthgate_store_migration_done_rows", type: "gauge", help: "Rows the migration step has handled."),
        Family(name: "healthgate_store_migration_finished", type: "gauge", help: "1 once the migration step finished, 0 while it runs."),
        Family(name: "healthgate_clock_synchronized", type: "gauge", help: "1 when the wall clock is synchronized or declared trusted, 0 when not."),
        Family(name: "healthgate_clock_maximum_error_seconds", type: "gauge", help: "The maximum error the kernel admits for the synchronized wall clock."),
        Family(
            name: "healthgate_watchdog_timeout_seconds", type: "gauge",
            help: "systemd's watchdog timeout (WatchdogSec=); the gateway checks its pipeline and pings every half of it."),
        Family(name: "healthgate_watchdog_pings_total", type: "counter", help: "WATCHDOG=1 notifications sent to systemd."),
        Family(name: "healthgate_watchdog_last_ping_timestamp_seconds", type: "gauge", help: "When the last WATCHDOG=1 was sent (Unix time)."),
        Family(
            name: "healthgate_watchdog_withheld", type: "gauge",
            help: "1 while the pings are withheld because the store's writer or a sink's queue has not moved (healthgate status says which), 0 while they are sent."),
    ]

    /// The exposition now. A store that cannot be read leaves its families out (and says why in
    /// a comment).
    public func render() async -> String {
        var samples: [String: [(labels: [String: String], value: Double)]] = [:]
        func add(_ name: String, _ labels: [String: String], _ value: Double) {
            samples[name, default: []].append((labels, value))
        }
        var notes: [String] = []
        for status in statusBoard.snapshot() {
            let labels = ["plugin": status.name, "kind": status.kind, "role": status.role.rawValue]
            add("healthgate_plugin_up", labels, status.state == .running ? 1 : 0)
            add("healthgate_plugin_records_total", labels, Double(status.records))
            add("healthgate_plugin_dropped_records_total", labels, Double(status.dropped))
            add("healthgate_plugin_errors_total", labels, Double(status.errors))
            add("healthgate_plugin_restarts_total", labels, Double(status.restarts))
            for (series, value) in status.metrics {
                add(series.name, series.labels.merging(["plugin": status.name]) { own, _ in own }, value)
            }
        }
        for (sink, depth) in queueDepths() { add("healthgate_sink_queue_records", ["sink": sink], Double(depth)) }
        if let counts = heartRateArbiter?.counts {
            add("healthgate_heart_rate_dropped_readings_total", [:], Double(counts.droppedReadings))
            add("healthgate_heart_rate_handovers_total", [:], Double(counts.handovers))
        }
        if let storeFacts {
            // What the store last published: nothing here waits on its disk.
            let snapshot = storeFacts.snapshot
            let now = clock.now()
            add("healthgate_store_stuck_seconds", [:], snapshot.stuckSince.map { max(0, now.timeIntervalSince($0)) } ?? 0)
            if let facts = snapshot.overview {
                for follower in facts.followers {
                    let cursor = follower.cursor, backlog = follower.backlog
                    let labels = ["follower": cursor.name]
                    add("healthgate_follower_lag_records", labels, Double(backlog.anchors))
                    add("healthgate_follower_lag_seconds", labels, backlog.oldest.map { max(0, now.timeIntervalSince($0)) } ?? 0)
                    add("healthgate_follower_lag_bytes", labels, Double(backlog.bytes))
                    add("healthgate_follower_dead_letters", labels, Double(follower.deadLetters))
                    add("healthgate_follower_pause_seconds", labels, cursor.pausedUntil.map { max(0, $0.timeIntervalSince(now)) } ?? 0)
                }
                add("healthgate_store_latest_anchor", [:], Double(facts.latestAnchor))
                for step in facts.migrationSteps {
                    add("healthgate_store_migration_rows", ["step": step.name], Double(step.total))
                    add("healthgate_store_migration_done_rows", ["step": step.name], Double(step.handled))
                    add("healthgate_store_migration_finished", ["step": step.name], step.finished == nil ? 0 : 1)
                }
            }
            if let error = snapshot.error {
                notes.append("# the store could not be read: " + Self.escape(error, quotes: false))
            }
        }
        if let watchdog = watchdog() {
            add("healthgate_watchdog_timeout_seconds", [:], watchdog.timeoutSeconds)
            add("healthgate_watchdog_pings_total", [:], Double(watchdog.pings))
            if let ping = watchdog.lastPing { add("healthgate_watchdog_last_ping_timestamp_seconds", [:], ping.timeIntervalSince1970) }
            add("healthgate_watchdog_withheld", [:], watchdog.withheld == nil ? 0 : 1)
        }
        let state = clockTrust.state()
        add("healthgate_clock_synchronized", [:], state.isTrusted ? 1 : 0)
        if case .synchronized(let error?) = state { add("healthgate_clock_maximum_error_seconds", [:], error) }

        var text = notes.map { $0 + "\n" }.joined()
        for family in Self.families {
            guard let lines = samples[family.name], !lines.isEmpty else { continue }
            text += "# HELP \(family.name) \(Self.escapeHelp(family.help))\n# TYPE \(family.name) \(family.type)\n"
            for line in lines.sorted(by: { Self.labelText($0.labels) < Self.labelText($1.labels) }) {
                text += family.name + Self.labelText(line.labels) + " " + Self.number(line.value) + "\n"
            }
        }
        return text
    }

    /// `{a="1",b="2"}` with the labels sorted and their values escaped; empty for no labels.
    static func labelText(_ labels: [String: String]) -> String {
        guard !labels.isEmpty else { return "" }
        let pairs = labels.sorted { $0.key < $1.key }.map { key, value in
            "\(key)=\"\(escape(value, quotes: true))\""
        }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    static func escapeHelp(_ text: String) -> String { escape(text, quotes: false) }

    /// Backslashes and line feeds escaped (and double quotes, in a label value).
    static func escape(_ text: String, quotes: Bool) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\"" where quotes: escaped += "\\\""
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A sample value: integers without a fraction, NaN and infinities as Prometheus spells them.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

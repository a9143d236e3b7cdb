public import BLEProfileKit
import BLETransport
public import GatewayRuntime

/// The `ble-heart-rate` source's own `config` keys, beside the shared Bluetooth keys
/// (``BluetoothSharedConfiguration``), each declared once in ``configurationKeys`` with its
/// default the value `init()` gives it. Every key is optional; see the plugin's README.md and
/// sample-config.json.
public struct HeartRateProfileConfiguration: Sendable, BluetoothProfileConfiguration {
    /// A heartbeat series is published at least this often (seconds) while connected.
    public var heartbeatSeriesSeconds: Double = 60
    /// …or once it holds this many beats, whichever comes first.
    public var heartbeatSeriesMaxBeats = 300
    /// Cumulative running samples (distance, estimated steps) cover windows this long (seconds).
    public var runningWindowSeconds: Double = 10
    /// The simulated transport's devices and rate.
    public var simulation = HeartRateSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    /// The keys given, every other at its default.
    public init(
        heartbeatSeriesSeconds: Double? = nil, heartbeatSeriesMaxBeats: Int? = nil, runningWindowSeconds: Double? = nil,
        simulation: HeartRateSimulationConfiguration? = nil
    ) {
        if let heartbeatSeriesSeconds { self.heartbeatSeriesSeconds = heartbeatSeriesSeconds }
        if let heartbeatSeriesMaxBeats { self.heartbeatSeriesMaxBeats = heartbeatSeriesMaxBeats }
        if let runningWindowSeconds { self.runningWindowSeconds = runningWindowSeconds }
        if let simulation { self.simulation = simulation }
    }

    /// The allowed `heartbeatSeriesSeconds` and `runningWindowSeconds`.
    public static let windowRange: ClosedRange<Double> = 1...3600
    /// The allowed `heartbeatSeriesMaxBeats`.
    public static let maxBeatsRange = 1...100_000

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "heartbeatSeriesSeconds", \.heartbeatSeriesSeconds, .number(windowRange, unit: "seconds"),
                "A heartbeat series is published at least this often"),
            ConfigurationKey(
                "heartbeatSeriesMaxBeats", \.heartbeatSeriesMaxBeats, .whole(maxBeatsRange, unit: "beats"),
                "…or once it holds this many beats"),
            ConfigurationKey(
                "runningWindowSeconds", \.runningWindowSeconds, .number(windowRange, unit: "seconds"),
                "The window of cumulative running samples (distance, steps)"),
            .simulation(\.simulation),
        ]
    }

    /// Checks that `simulation.polarDeviceIDs` names no more straps than there are simulated
    /// monitors (the ranges are declared, a simulation of no device is the kit's check); no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate(simulated: Bool) throws(PluginConfigurationError) {
        if let ids = simulation.polarDeviceIDs, ids.count > simulation.heartRateMonitors {
            throw PluginConfigurationError(
                keyPath: "simulation.polarDeviceIDs",
                reason: "names \(ids.count) straps, more than the \(simulation.heartRateMonitors) simulated heart-rate monitors")
        }
    }
}

/// The simulated transport's devices (`simulation`, with `transport: "simulated"`).
public struct HeartRateSimulationConfiguration: Sendable, BluetoothSimulation {
    /// Simulated heart-rate monitors.
    public var heartRateMonitors = 1
    /// Simulated running foot pods.
    public var footPods = 0
    /// Notifications per second per device (1, as real monitors send).
    public var notificationsPerSecond: Double = 1
    /// Polar device ids the last monitors take, one each, in their names (`Polar H10 <id>`): a
    /// simulated Polar broadcast of the same id is then the same strap heard on a second path.
    public var polarDeviceIDs: [String]?

    /// Every key at its default.
    public init() {}

    /// The counts and rate given, every other at its default.
    public init(heartRateMonitors: Int? = nil, footPods: Int? = nil, notificationsPerSecond: Double? = nil) {
        if let heartRateMonitors { self.heartRateMonitors = heartRateMonitors }
        if let footPods { self.footPods = footPods }
        if let notificationsPerSecond { self.notificationsPerSecond = notificationsPerSecond }
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .simulatedCount("heartRateMonitors", \.heartRateMonitors, "Simulated heart-rate monitors"),
            .simulatedCount("footPods", \.footPods, "Simulated running foot pods"),
            .notificationRate(\.notificationsPerSecond),
            ConfigurationKey(
                "polarDeviceIDs", \.polarDeviceIDs, .array(.string(pattern: "^[0-9A-F]{8}$", minLength: 8), minItems: 1),
                "Polar device ids (8 hex digits) the last monitors take in their names, \"Polar H10 <id>\": each is then the "
                    + "strap a Polar broadcast of that id comes from, heard connected and broadcasting; absent: none"),
        ]
    }

    /// The monitors and the foot pods.
    public var deviceCount: Int { heartRateMonitors + footPods }
}

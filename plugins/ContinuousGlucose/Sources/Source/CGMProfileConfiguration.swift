public import BLEProfileKit
public import GatewayRuntime

/// The `ble-cgm` source's own `config` keys, beside the shared Bluetooth keys
/// (``BluetoothSharedConfiguration``), each declared once in ``configurationKeys`` with its
/// default the value `init()` gives it.
public struct CGMProfileConfiguration: Sendable, BluetoothProfileConfiguration {
    /// What the gateway does about the sensor's session at each connection.
    public enum SessionAction: String, Sendable, Hashable, ConfigurationChoice {
        /// Leaves it as it is (the default): the sensor's own app or button starts it.
        case keep
        /// Starts one when the sensor says its session is stopped.
        case start
        /// Stops a running one (a sensor about to be removed).
        case stop
    }

    /// `session`: keep, start or stop.
    public var session = SessionAction.keep
    /// `communicationIntervalMinutes`: written to the sensor at each connection when set
    /// (1…254, 255 as fast as it can); nil leaves its own.
    public var communicationIntervalMinutes: Int?
    /// The simulated transport's sensors.
    public var simulation = CGMSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    /// The keys given, every other at its default.
    public init(session: SessionAction? = nil, communicationIntervalMinutes: Int? = nil, simulation: CGMSimulationConfiguration? = nil) {
        if let session { self.session = session }
        self.communicationIntervalMinutes = communicationIntervalMinutes
        if let simulation { self.simulation = simulation }
    }

    /// The allowed `communicationIntervalMinutes` (CGMS 1.0.1 §3.6.2.1: 0 would stop the
    /// measurements, which a gateway has no use for).
    public static let communicationIntervalRange = 1...255

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "session", \.session, SessionAction.configurationShape,
                "At each connection: keep the sensor's session as it is, start one when it is stopped, or stop a running one"),
            ConfigurationKey(
                "communicationIntervalMinutes", \.communicationIntervalMinutes, .whole(communicationIntervalRange, unit: "minutes"),
                "Written to the sensor at each connection (255: as fast as it can); absent leaves its own"),
            .simulation(\.simulation, "The simulated transport's sensors (transport: simulated)"),
        ]
    }
}

/// The simulated transport's sensors (`simulation`, with `transport: "simulated"`).
public struct CGMSimulationConfiguration: Sendable, BluetoothSimulation {
    /// Simulated sensors.
    public var sensors = 1
    /// Minutes between two records.
    public var recordIntervalMinutes = 5
    /// Minutes of session before the transport is made: the records stored then.
    public var historyMinutes = 30

    /// Every key at its default.
    public init() {}

    /// The values given, every other at its default.
    public init(sensors: Int? = nil, recordIntervalMinutes: Int? = nil, historyMinutes: Int? = nil) {
        if let sensors { self.sensors = sensors }
        if let recordIntervalMinutes { self.recordIntervalMinutes = recordIntervalMinutes }
        if let historyMinutes { self.historyMinutes = historyMinutes }
    }

    /// The allowed `recordIntervalMinutes`.
    public static let recordIntervalRange = 1...60
    /// The allowed `historyMinutes`: up to a sensor's 14 days.
    public static let historyRange = 0...(14 * 24 * 60)
    /// The allowed `sensors`: the only kind of simulated device, so at least one.
    public static let sensorsRange = 1...BLESourceKeys.simulatedDevices.upperBound

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("sensors", \.sensors, .whole(sensorsRange, unit: "devices"), "Simulated continuous glucose monitors"),
            ConfigurationKey(
                "recordIntervalMinutes", \.recordIntervalMinutes, .whole(recordIntervalRange, unit: "minutes"),
                "Minutes between two records of a simulated sensor"),
            ConfigurationKey(
                "historyMinutes", \.historyMinutes, .whole(historyRange, unit: "minutes"),
                "How far into its session a simulated sensor is when the gateway starts: its stored records"),
        ]
    }

    /// The sensors.
    public var deviceCount: Int { sensors }
}

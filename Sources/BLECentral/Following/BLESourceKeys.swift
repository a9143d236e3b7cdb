public import BLETransport
public import GatewayRuntime
public import SampleBus

/// The checks of the keys every Bluetooth LE source shares (`adapter`, `adapters`,
/// `maxDevices`, `simulation.notificationsPerSecond`), and the adapters they name, so each
/// source reports them the same way. The adapters' limits are the gateway's
/// (`bluetooth.adapterLimits`, ``BluetoothAdapters``), not a source's.
public enum BLESourceKeys {
    /// The allowed `maxDevices`.
    public static let maxDevicesRange = 1...1024

    /// Checks `maxDevices`, `adapter`, `adapters` and the simulated notification rate; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public static func validate(
        maxDevices: Int?, adapter: String?, adapters: [String]?, simulated: Bool, notificationsPerSecond: Double?
    ) throws(PluginConfigurationError) {
        if let maxDevices {
            try PluginConfigurationError.check("maxDevices", maxDevices, in: maxDevicesRange, unit: "devices")
        }
        if let adapter { try checkName(adapter, keyPath: "adapter") }
        if let adapters {
            guard adapter == nil else {
                throw PluginConfigurationError(keyPath: "adapters", reason: "give either adapter or adapters, not both")
            }
            guard !adapters.isEmpty else {
                throw PluginConfigurationError(keyPath: "adapters", reason: "an empty list names no adapter; leave it out for the first one")
            }
            guard !simulated else {
                throw PluginConfigurationError(keyPath: "adapters", reason: "applies to the bluez transport, not the simulated one")
            }
            for (index, name) in adapters.enumerated() { try checkName(name, keyPath: "adapters[\(index)]") }
            if let repeated = adapters.first(where: { name in adapters.filter { $0 == name }.count > 1 }) {
                throw PluginConfigurationError(keyPath: "adapters", reason: "\"\(repeated)\" is listed twice")
            }
        }
        if let notificationsPerSecond, let problem = notificationRate.problem(with: notificationsPerSecond) {
            throw PluginConfigurationError(keyPath: "simulation.notificationsPerSecond", reason: problem)
        }
    }

    /// The accepted `simulation.notificationsPerSecond`: each notification is scheduled a
    /// `Duration` apart, which a rate near zero would overflow.
    public static let notificationRate = NumberRule(range: 0.01...100, unit: "notifications per second", whole: false)

    /// The keys every Bluetooth LE source takes before its own: `transport`, `adapter`,
    /// `adapters`, `devices`, `maxDevices` and `reconnect`.
    public static func sharedProperties(maxDevicesDefault: String) -> [ConfigurationProperty] {
        [
            ConfigurationProperty(
                "transport", .string(values: BLETransportChoice.allCases.map(\.rawValue)), default: "bluez",
                "The Bluetooth stack: bluez (the system's, over D-Bus) or simulated devices"),
            ConfigurationProperty(
                "adapter", .string(pattern: "^[^/]+$", minLength: 1),
                "The BlueZ adapter (hci0); absent: the first BlueZ lists. Not with adapters"),
            ConfigurationProperty(
                "adapters", .array(.string(pattern: "^[^/]+$", minLength: 1), minItems: 1),
                "Several BlueZ adapters to spread the devices over, each listed once; not with adapter"),
            ConfigurationProperty(
                "devices", DeviceSelection.configurationSchema, default: "any",
                "Which peripherals to follow: \"any\" or a list of addresses, name globs or matcher objects"),
            ConfigurationProperty(
                "maxDevices", .whole(maxDevicesRange, unit: "devices"),
                "How many devices to follow at once; absent: \(maxDevicesDefault)"),
            ConfigurationProperty(
                "reconnect", ReconnectPolicy.configurationSchema, "The reconnect and rediscovery backoff"),
        ]
    }

    /// How many devices of one kind a simulated transport makes.
    public static let simulatedDevices = 0...16

    /// A simulated device count, `simulation.NAME`.
    public static func simulatedCount(_ name: String, default value: Int, _ description: String) -> ConfigurationProperty {
        ConfigurationProperty(name, .whole(simulatedDevices, unit: "devices"), default: .number(Double(value)), description)
    }

    /// `simulation.notificationsPerSecond`.
    public static var notificationRateProperty: ConfigurationProperty {
        ConfigurationProperty(
            "notificationsPerSecond", .number(notificationRate), default: 1, "Notifications per second per simulated device")
    }

    /// The adapters a source uses: `adapters`, else `adapter` (nil: the first BlueZ lists).
    public static func adapterNames(adapter: String?, adapters: [String]?) -> [String?] {
        adapters ?? [adapter]
    }

    /// The error for a source's `adapterLimits`, which earlier versions took per source: the
    /// limits are the gateway's now, set once for every source.
    public static let movedAdapterLimits = PluginConfigurationError(
        keyPath: "adapterLimits",
        reason: "the adapters' limits are the gateway's, shared by every Bluetooth source: move this block to the "
            + "top level of the configuration as \"bluetooth\": {\"adapterLimits\": {…}}")

    private static func checkName(_ name: String, keyPath: String) throws(PluginConfigurationError) {
        if name.isEmpty || name.contains("/") {
            throw PluginConfigurationError(keyPath: keyPath, reason: "expected an adapter name like \"hci0\", got \"\(name)\"")
        }
    }
}

extension PeripheralFollower.Radio {
    /// One radio per adapter name, each with the gateway's transport and the scheduler it shares
    /// for that adapter (`bluetooth`, the gateway's adapters).
    public static func make(adapters: [String?], bluetooth: BluetoothAdapters) -> [PeripheralFollower.Radio] {
        adapters.map { adapter in
            PeripheralFollower.Radio(
                transport: bluetooth.transport(for: adapter),
                scheduler: bluetooth.scheduler(for: adapter), watched: bluetooth.watchdog)
        }
    }

    /// A radio with a scheduler of its own: for a plugin's simulated transport, which no other
    /// source shares. It has the gateway's limits (`bluetooth`'s), with `connections` (when
    /// given) in place of theirs.
    public static func unshared(
        _ transport: any BLECentralTransport, adapter: String?, connections: Int? = nil, bluetooth: BluetoothAdapters,
        environment: PluginEnvironment
    ) -> PeripheralFollower.Radio {
        var limits = bluetooth.limits
        if let connections { limits.connections = connections }
        return PeripheralFollower.Radio(
            transport: transport,
            scheduler: AdapterScheduler(adapter: adapter ?? "default", limits: limits, clock: environment.clock),
            watched: false)
    }
}

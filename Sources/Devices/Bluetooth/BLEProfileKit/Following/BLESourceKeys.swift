public import BLETransport
public import GatewayRuntime
public import SampleBus

/// What the keys every Bluetooth LE source shares have in common beyond their declarations
/// (``BluetoothSharedConfiguration``): the checks that tie `adapter` and `adapters` together, the
/// shapes of the simulation keys every profile's simulator has, and the adapters they name, so
/// each source reports them the same way. The adapters' limits are the gateway's
/// (`bluetooth.adapterLimits`, ``BluetoothAdapters``), not a source's.
public enum BLESourceKeys {
    /// The allowed `maxDevices`.
    public static let maxDevicesRange = 1...1024

    /// Checks `adapter` and `adapters` (the names, and one of the two); their ranges and
    /// `maxDevices`' are declared. No I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public static func validate(adapter: String?, adapters selection: AdapterSelection?, simulated: Bool) throws(PluginConfigurationError) {
        if let adapter { try checkName(adapter, keyPath: "adapter") }
        if let selection {
            guard adapter == nil else {
                throw PluginConfigurationError(keyPath: "adapters", reason: "give either adapter or adapters, not both")
            }
            let simulatedError = PluginConfigurationError(keyPath: "adapters", reason: "applies to the bluez transport, not the simulated one")
            guard let adapters = selection.names else {
                if simulated { throw simulatedError }
                return
            }
            guard !adapters.isEmpty else {
                throw PluginConfigurationError(keyPath: "adapters", reason: "an empty list names no adapter; leave it out for the first one")
            }
            guard !simulated else { throw simulatedError }
            for (index, name) in adapters.enumerated() { try checkName(name, keyPath: "adapters[\(index)]") }
            if let repeated = adapters.first(where: { name in adapters.filter { $0 == name }.count > 1 }) {
                throw PluginConfigurationError(keyPath: "adapters", reason: "\"\(repeated)\" is listed twice")
            }
        }
    }

    /// Refuses a simulated transport that simulates nothing (`simulation`'s device counts all
    /// zero), which would follow no device and say nothing.
    public static func checkSimulation(deviceCount: Int, simulated: Bool) throws(PluginConfigurationError) {
        if simulated, deviceCount == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }

    /// The accepted `simulation.notificationsPerSecond`: each notification is scheduled a
    /// `Duration` apart, which a rate near zero would overflow.
    public static let notificationRate = NumberRule(range: 0.01...100, unit: "notifications per second", whole: false)

    /// How many devices of one kind a simulated transport makes.
    public static let simulatedDevices = 0...16

    /// The adapters a source names: `adapters`, else `adapter`; nil when neither is given.
    public static func adapterSelection(adapter: String?, adapters: AdapterSelection?) -> AdapterSelection? {
        adapters ?? adapter.map { .named([$0]) }
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

/// The keys every profile's `simulation` block has in the same shape, declared once.
extension ConfigurationKey {
    /// `simulation`: the simulated transport's devices, a block of the profile's own keys.
    public static func simulation<Value: DeclaredConfiguration>(
        _ keyPath: any WritableKeyPath<Root, Value> & Sendable,
        _ description: String = "The simulated transport's devices (transport: simulated); together at least one"
    ) -> ConfigurationKey {
        ConfigurationKey("simulation", keyPath, description)
    }

    /// A simulated device count, `simulation.NAME`: 0 to 16 devices of one kind.
    public static func simulatedCount(
        _ name: String, _ keyPath: any WritableKeyPath<Root, Int> & Sendable, _ description: String
    ) -> ConfigurationKey {
        ConfigurationKey(name, keyPath, .whole(BLESourceKeys.simulatedDevices, unit: "devices"), description)
    }

    /// `simulation.notificationsPerSecond`, per simulated device.
    public static func notificationRate(_ keyPath: any WritableKeyPath<Root, Double> & Sendable) -> ConfigurationKey {
        ConfigurationKey(
            "notificationsPerSecond", keyPath, .number(BLESourceKeys.notificationRate),
            "Notifications per second per simulated device")
    }
}

extension PeripheralSupervisor.Radio {
    /// One radio per adapter name, each with the gateway's transport and the scheduler it shares
    /// for that adapter (`bluetooth`, the gateway's adapters).
    public static func make(adapters: [String?], bluetooth: BluetoothAdapters) -> [PeripheralSupervisor.Radio] {
        adapters.map { adapter in
            PeripheralSupervisor.Radio(
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
    ) -> PeripheralSupervisor.Radio {
        var limits = bluetooth.limits
        if let connections { limits.connections = connections }
        return PeripheralSupervisor.Radio(
            transport: transport,
            scheduler: AdapterScheduler(adapter: adapter ?? "default", limits: limits, clock: environment.clock),
            watched: false)
    }
}

public import SampleBus

/// The checks of the keys every Bluetooth LE source shares (`adapter`, `maxDevices`,
/// `simulation.notificationsPerSecond`), so each source reports them the same way.
public enum BLESourceKeys {
    /// The allowed `maxDevices`.
    public static let maxDevicesRange = 1...1024

    /// Checks `maxDevices`, `adapter` and the simulated notification rate; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public static func validate(
        maxDevices: Int?, adapter: String?, notificationsPerSecond: Double
    ) throws(PluginConfigurationError) {
        if let maxDevices {
            try PluginConfigurationError.check("maxDevices", maxDevices, in: maxDevicesRange, unit: "devices")
        }
        if let adapter, adapter.isEmpty || adapter.contains("/") {
            throw PluginConfigurationError(keyPath: "adapter", reason: "expected an adapter name like \"hci0\", got \"\(adapter)\"")
        }
        guard notificationsPerSecond > 0, notificationsPerSecond <= 100 else {
            throw PluginConfigurationError(keyPath: "simulation.notificationsPerSecond", reason: "must be above 0 and at most 100")
        }
    }
}

public import BLETransport
public import GatewayRuntime
public import SampleBus

extension BluetoothSettings {
    /// The configuration's `bluetooth` section (``GatewayConfiguration/bluetooth``), decoded
    /// strictly and range-checked: the Bluetooth family owns the section, the bus only carries it.
    /// Absent: the defaults.
    /// - Throws: ``ConfigurationError`` naming `origin` and `bluetooth.KEY`.
    public static func decode(_ value: JSONValue?, origin: String) throws(ConfigurationError) -> BluetoothSettings {
        guard let value, value != .null else { return BluetoothSettings() }
        let settings = try GatewayConfiguration.decodeSection(value, as: BluetoothSettings.self, key: "bluetooth", origin: origin)
        do {
            try settings.adapterLimits.validate()
        } catch {
            throw ConfigurationError(file: origin, keyPath: "bluetooth.\(error.keyPath)", reason: error.reason)
        }
        return settings
    }
}

public import BLETransport
public import GatewayRuntime
public import SampleBus

extension BluetoothConfiguration {
    /// The configuration's `bluetooth` section (``GatewayConfiguration/bluetooth``), decoded
    /// strictly and checked against its declared ranges: the Bluetooth family owns the section,
    /// the bus only carries it. Absent: the defaults.
    /// - Throws: ``ConfigurationError`` naming `origin` and `bluetooth.KEY`.
    public static func decode(_ value: JSONValue?, origin: String) throws(ConfigurationError) -> BluetoothConfiguration {
        guard let value, value != .null else { return BluetoothConfiguration() }
        let configuration = try GatewayConfiguration.decodeSection(
            value, as: BluetoothConfiguration.self, key: "bluetooth", origin: origin)
        do {
            try configurationSchema.check(configuration.configurationJSON)
        } catch {
            throw ConfigurationError(file: origin, keyPath: ConfigurationKeyPath.joining("bluetooth", error.keyPath), reason: error.reason)
        }
        // The adapters' names, as a source's are checked: a list of one or more, none twice.
        do {
            try BLESourceKeys.validate(adapter: nil, adapters: configuration.adapters, simulated: false)
        } catch {
            throw ConfigurationError(file: origin, keyPath: ConfigurationKeyPath.joining("bluetooth", error.keyPath), reason: error.reason)
        }
        return configuration
    }
}

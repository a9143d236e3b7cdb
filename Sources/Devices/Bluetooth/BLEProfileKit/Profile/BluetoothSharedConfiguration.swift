public import BLETransport
public import GatewayRuntime

/// The `config` keys every Bluetooth LE source shares: `transport`, `adapter`, `adapters`,
/// `devices`, `maxDevices` and `reconnect`, each declared once here. Decoded from the same
/// object as the profile's own keys (``BluetoothSourceConfiguration``); strict decoding reports
/// a key neither declares.
public struct BluetoothSharedConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// The Bluetooth stack.
    public var transport = BLETransportChoice.bluez
    /// The BlueZ adapter (`hci0`); nil means the adapter BlueZ lists first by name.
    public var adapter: String?
    /// Several BlueZ adapters to spread the devices over, or all of them (instead of `adapter`).
    public var adapters: AdapterSelection?
    /// Which peripherals to follow.
    public var devices = DeviceSelection.any
    /// How many devices to follow at once; nil means the profile's default.
    public var maxDevices: Int?
    /// Reconnect and rediscovery backoff.
    public var reconnect = ReconnectPolicy()

    /// Every key at its default.
    public init() {}

    /// The keys given, every other at its default.
    public init(
        transport: BLETransportChoice? = nil, adapter: String? = nil, adapters: AdapterSelection? = nil, devices: DeviceSelection? = nil,
        maxDevices: Int? = nil, reconnect: ReconnectPolicy? = nil
    ) {
        if let transport { self.transport = transport }
        self.adapter = adapter
        self.adapters = adapters
        if let devices { self.devices = devices }
        self.maxDevices = maxDevices
        if let reconnect { self.reconnect = reconnect }
    }

    /// The shared keys, with `maxDevices`' default as the profile states it.
    public static var configurationKeys: [ConfigurationKey<Self>] { keys(maxDevicesDefault: "the profile's default") }

    /// The shared keys; `maxDevicesDefault` says how many devices a profile follows when
    /// `maxDevices` is absent (from ``BluetoothProfile/maxDevicesWithBlueZ``).
    public static func keys(maxDevicesDefault: String) -> [ConfigurationKey<Self>] {
        let adapterName = ConfigurationSchema.string(pattern: "^[^/]+$", minLength: 1)
        return [
            .refused("adapterLimits", BLESourceKeys.movedAdapterLimits),
            ConfigurationKey(
                "transport", \.transport, BLETransportChoice.configurationShape,
                "The Bluetooth stack: bluez (the system's, over D-Bus) or simulated devices"),
            ConfigurationKey("adapter", \.adapter, adapterName, "The BlueZ adapter (hci0); absent: the first BlueZ lists. Not with adapters"),
            ConfigurationKey(
                "adapters", \.adapters, AdapterSelection.configurationSchema,
                "Several BlueZ adapters to spread the devices over, each listed once, or \"all\" (every adapter BlueZ has when "
                    + "the source starts); not with adapter. Neither given: the gateway's bluetooth.adapters, else the first adapter"),
            ConfigurationKey(
                "devices", \.devices, DeviceSelection.configurationSchema,
                "Which peripherals to follow: \"any\" or a list of addresses, name globs or matcher objects"),
            ConfigurationKey(
                "maxDevices", \.maxDevices, .whole(BLESourceKeys.maxDevicesRange, unit: "devices"),
                "How many devices to follow at once; absent: \(maxDevicesDefault)"),
            ConfigurationKey("reconnect", \.reconnect, "The reconnect and rediscovery backoff"),
        ]
    }

    /// Whether the profile's simulator stands in for Bluetooth.
    public var simulated: Bool { transport == .simulated }

    /// The adapters the source names: `adapters`, else `adapter`; nil when it names none (the
    /// gateway's `bluetooth.adapters` then, ``BluetoothAdapters/resolve(_:)``).
    public var adapterSelection: AdapterSelection? { BLESourceKeys.adapterSelection(adapter: adapter, adapters: adapters) }
}


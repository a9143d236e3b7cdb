import BLETransport
public import GatewayRuntime
public import SampleBus

/// The `config` keys every Bluetooth LE source shares: `transport`, `adapter`, `adapters`,
/// `devices`, `maxDevices` and `reconnect`. Decoded from the same object as the profile's own
/// keys; strict decoding reports a key neither knows.
public struct BLESharedSettings: Decodable, Sendable, Hashable {
    /// The Bluetooth stack (default `bluez`).
    public var transport: BLETransportChoice
    /// The BlueZ adapter (`hci0`); nil means the adapter BlueZ lists first by name.
    public var adapter: String?
    /// Several BlueZ adapters to spread the devices over (instead of `adapter`).
    public var adapters: [String]?
    /// Which peripherals to follow.
    public var devices: DeviceSelection
    /// How many devices to follow at once; nil means the profile's default.
    public var maxDevices: Int?
    /// Reconnect and rediscovery backoff.
    public var reconnect: ReconnectPolicy

    /// The shared keys with every default.
    public init(
        transport: BLETransportChoice = .bluez, adapter: String? = nil, adapters: [String]? = nil,
        devices: DeviceSelection = .any, maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy()
    ) {
        self.transport = transport
        self.adapter = adapter
        self.adapters = adapters
        self.devices = devices
        self.maxDevices = maxDevices
        self.reconnect = reconnect
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transport, adapter, adapters, adapterLimits, devices, maxDevices, reconnect
    }

    /// Decodes the shared keys of the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.adapterLimits) { throw BLESourceKeys.movedAdapterLimits }
        let defaults = BLESharedSettings()
        transport = try c.decodeIfPresent(BLETransportChoice.self, forKey: .transport) ?? defaults.transport
        adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        adapters = try c.decodeIfPresent([String].self, forKey: .adapters)
        devices = try c.decodeIfPresent(DeviceSelection.self, forKey: .devices) ?? defaults.devices
        maxDevices = try c.decodeIfPresent(Int.self, forKey: .maxDevices)
        reconnect = try c.decodeIfPresent(ReconnectPolicy.self, forKey: .reconnect) ?? defaults.reconnect
    }

    /// Whether the profile's simulator stands in for Bluetooth.
    public var simulated: Bool { transport == .simulated }

    /// The adapters the source uses (nil: the first BlueZ lists).
    public var adapterNames: [String?] { BLESourceKeys.adapterNames(adapter: adapter, adapters: adapters) }
}

/// The `config` object of a Bluetooth LE source: the shared keys and the profile's own.
/// Their fields read as the configuration's own (`configuration.reconnect`,
/// `configuration.heartbeatSeriesSeconds`).
@dynamicMemberLookup
public struct BluetoothSourceConfiguration<Profile: BluetoothProfile>: PluginConfigurationContract, Hashable {
    public var shared: BLESharedSettings
    public var options: Profile.Options

    public init(shared: BLESharedSettings = BLESharedSettings(), options: Profile.Options = Profile.defaultOptions) {
        self.shared = shared
        self.options = options
    }

    /// Decodes both from the one `config` object.
    public init(from decoder: any Decoder) throws {
        shared = try BLESharedSettings(from: decoder)
        options = try Profile.Options(from: decoder)
    }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<BLESharedSettings, Value>) -> Value {
        get { shared[keyPath: keyPath] }
        set { shared[keyPath: keyPath] = newValue }
    }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<Profile.Options, Value>) -> Value {
        get { options[keyPath: keyPath] }
        set { options[keyPath: keyPath] = newValue }
    }

    /// The number of devices followed at once, after defaults.
    public var effectiveMaxDevices: Int {
        shared.maxDevices ?? Profile.defaultMaxDevices(options, simulated: shared.simulated)
    }

    /// ``validate()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Self {
        try validate()
        return self
    }

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate() throws(PluginConfigurationError) {
        try BLESourceKeys.validate(
            maxDevices: shared.maxDevices, adapter: shared.adapter, adapters: shared.adapters,
            simulated: shared.simulated, notificationsPerSecond: Profile.notificationsPerSecond(options))
        try Profile.validate(options, simulated: shared.simulated)
    }

    /// Every key of the `config` object: the shared ones, then the profile's.
    public static var configurationSchema: ConfigurationSchema {
        .object(BLESourceKeys.sharedProperties(maxDevicesDefault: Profile.maxDevicesDefault) + Profile.optionProperties)
    }
}

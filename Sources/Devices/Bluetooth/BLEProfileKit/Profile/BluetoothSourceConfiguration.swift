public import BLETransport
public import GatewayRuntime
public import SampleBus

/// The `config` object of a Bluetooth LE source: the shared keys
/// (``BluetoothSharedConfiguration``) and the profile's own (``BluetoothProfile/Configuration``),
/// each declared once in its type and decoded together from the one object, so strict decoding
/// knows both and refuses a key neither declares. Their fields read as the configuration's own
/// (`configuration.reconnect`, `configuration.heartbeatSeriesSeconds`).
@dynamicMemberLookup
public struct BluetoothSourceConfiguration<Profile: BluetoothProfile>: PluginConfigurationContract, DeclaredConfiguration, Hashable {
    public var shared: BluetoothSharedConfiguration
    public var profile: Profile.Configuration

    /// Every key at its default.
    public init() {
        self.init(shared: BluetoothSharedConfiguration(), profile: Profile.Configuration())
    }

    public init(shared: BluetoothSharedConfiguration, profile: Profile.Configuration) {
        self.shared = shared
        self.profile = profile
    }

    /// The shared keys given and the profile's own, every other at its default.
    public init(
        transport: BLETransportChoice? = nil, adapter: String? = nil, adapters: AdapterSelection? = nil, devices: DeviceSelection? = nil,
        maxDevices: Int? = nil, reconnect: ReconnectPolicy? = nil, profile: Profile.Configuration = Profile.Configuration()
    ) {
        self.init(
            shared: BluetoothSharedConfiguration(
                transport: transport, adapter: adapter, adapters: adapters, devices: devices, maxDevices: maxDevices, reconnect: reconnect),
            profile: profile)
    }

    /// The shared keys, then the profile's.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        BluetoothSharedConfiguration.keys(maxDevicesDefault: Profile.maxDevicesDefault).map { $0.embedded(in: \Self.shared) }
            + Profile.Configuration.configurationKeys.map { $0.embedded(in: \Self.profile) }
    }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<BluetoothSharedConfiguration, Value>) -> Value {
        get { shared[keyPath: keyPath] }
        set { shared[keyPath: keyPath] = newValue }
    }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<Profile.Configuration, Value>) -> Value {
        get { profile[keyPath: keyPath] }
        set { profile[keyPath: keyPath] = newValue }
    }

    /// The number of devices followed at once, after defaults: `maxDevices`, else every simulated
    /// device when simulated, else the profile's ``BluetoothProfile/maxDevicesWithBlueZ``.
    public var effectiveMaxDevices: Int {
        shared.maxDevices ?? (shared.simulated ? profile.simulation.deviceCount : Profile.maxDevicesWithBlueZ)
    }

    /// ``validate()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Self {
        try validate()
        return self
    }

    /// Checks every value that decodes but cannot work: the declared ranges (as a file is
    /// checked before it is decoded, for a configuration built in code), then what ties keys
    /// together, the shared ones', a simulation of no device, and the profile's; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate() throws(PluginConfigurationError) {
        try Self.configurationSchema.check(configurationJSON)
        try BLESourceKeys.validate(adapter: shared.adapter, adapters: shared.adapters, simulated: shared.simulated)
        try BLESourceKeys.checkSimulation(deviceCount: profile.simulation.deviceCount, simulated: shared.simulated)
        try profile.validate(simulated: shared.simulated)
    }
}

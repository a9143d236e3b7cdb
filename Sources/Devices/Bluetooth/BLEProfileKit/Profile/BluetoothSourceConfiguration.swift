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

    /// The number of devices followed at once, after defaults.
    public var effectiveMaxDevices: Int {
        shared.maxDevices ?? Profile.defaultMaxDevices(profile, simulated: shared.simulated)
    }

    /// ``validate()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Self {
        try validate()
        return self
    }

    /// Checks every value that decodes but cannot work: the declared ranges (as a file is
    /// checked before it is decoded, for a configuration built in code), then what ties keys
    /// together, the shared ones' and the profile's; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate() throws(PluginConfigurationError) {
        try Self.configurationSchema.check(configurationJSON)
        try BLESourceKeys.validate(adapter: shared.adapter, adapters: shared.adapters, simulated: shared.simulated)
        try Profile.validate(profile, simulated: shared.simulated)
    }
}

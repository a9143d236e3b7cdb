public import GatewayRuntime

/// The gateway's `bluetooth` block: what holds for every adapter, whichever sources use it.
///
/// ```json
/// "bluetooth": {"adapterLimits": {"connections": 7, "failedAttemptsPerMinute": 30}}
/// ```
public struct BluetoothConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// Every adapter's limits (each key optional, defaults as ``AdapterScheduler/Limits/init()``).
    public var adapterLimits = AdapterScheduler.Limits()

    /// Every key at its default.
    public init() {}

    public init(adapterLimits: AdapterScheduler.Limits) {
        self.adapterLimits = adapterLimits
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [ConfigurationKey("adapterLimits", \.adapterLimits, "Every Bluetooth adapter's limits, shared by every source on it")]
    }
}

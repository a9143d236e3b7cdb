public import GatewayRuntime

/// The gateway's `bluetooth` block: what holds for every adapter, whichever sources use it.
///
/// ```json
/// "bluetooth": {"adapters": "all", "adapterLimits": {"connections": 7, "failedAttemptsPerMinute": 30}}
/// ```
public struct BluetoothConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// Every adapter's limits (each key optional, defaults as ``AdapterScheduler/Limits/init()``).
    public var adapterLimits = AdapterScheduler.Limits()
    /// The adapters of every Bluetooth LE source that names none of its own (neither `adapter`
    /// nor `adapters`); nil: the adapter BlueZ lists first.
    public var adapters: AdapterSelection?

    /// Every key at its default.
    public init() {}

    public init(adapterLimits: AdapterScheduler.Limits, adapters: AdapterSelection? = nil) {
        self.adapterLimits = adapterLimits
        self.adapters = adapters
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("adapterLimits", \.adapterLimits, "Every Bluetooth adapter's limits, shared by every source on it"),
            ConfigurationKey(
                "adapters", \.adapters, AdapterSelection.configurationSchema,
                "The adapters of every Bluetooth LE source that names none itself: a list, or \"all\" (every adapter BlueZ has "
                    + "when the source starts); devices spread over them by their free slots. Absent: the first BlueZ lists"),
        ]
    }
}

public import Foundation
public import SampleBus

/// The `config` object of a `ble-heart-rate` source. Every key is optional; see the plugin's
/// README.md and sample-config.json. Decoding is strict (``ConfigurationDecoder``); the defaults
/// are declared once, in the memberwise initializers; ``validated(in:)`` checks every value.
public struct HeartRateSourceConfiguration: Decodable, Sendable, Hashable, PluginConfigurationContract {
    /// Which Bluetooth stack to use.
    public enum TransportChoice: String, Decodable, Sendable, Hashable, CaseIterable {
        /// BlueZ over the system D-Bus (the default).
        case bluez
        /// Simulated devices that send real payload bytes (`healthgate demo`).
        case simulated
    }

    /// The Bluetooth stack (default `bluez`).
    public var transport: TransportChoice
    /// The BlueZ adapter (`hci0`); nil means the adapter BlueZ lists first by name.
    public var adapter: String?
    /// Which peripherals to follow.
    public var devices: DeviceSelection
    /// How many devices to follow at once; nil means 1 for BlueZ and every simulated device.
    public var maxDevices: Int?
    /// Reconnect and rediscovery backoff.
    public var reconnect: ReconnectPolicy
    /// A heartbeat series is published at least this often (seconds) while connected.
    public var heartbeatSeriesSeconds: Double
    /// …or once it holds this many beats, whichever comes first.
    public var heartbeatSeriesMaxBeats: Int
    /// Cumulative running samples (distance, estimated steps) cover windows this long (seconds).
    public var runningWindowSeconds: Double
    /// Settings of the simulated transport.
    public var simulation: SimulationSettings

    /// The configuration with every default.
    public init(
        transport: TransportChoice = .bluez, adapter: String? = nil, devices: DeviceSelection = .any,
        maxDevices: Int? = nil, reconnect: ReconnectPolicy = ReconnectPolicy(),
        heartbeatSeriesSeconds: Double = 60, heartbeatSeriesMaxBeats: Int = 300,
        runningWindowSeconds: Double = 10, simulation: SimulationSettings = SimulationSettings()
    ) {
        self.transport = transport
        self.adapter = adapter
        self.devices = devices
        self.maxDevices = maxDevices
        self.reconnect = reconnect
        self.heartbeatSeriesSeconds = heartbeatSeriesSeconds
        self.heartbeatSeriesMaxBeats = heartbeatSeriesMaxBeats
        self.runningWindowSeconds = runningWindowSeconds
        self.simulation = simulation
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transport, adapter, devices, maxDevices, reconnect, heartbeatSeriesSeconds,
            heartbeatSeriesMaxBeats, runningWindowSeconds, simulation
    }

    /// Decodes the `config` object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = HeartRateSourceConfiguration()
        transport = try c.decodeIfPresent(TransportChoice.self, forKey: .transport) ?? defaults.transport
        adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        devices = try c.decodeIfPresent(DeviceSelection.self, forKey: .devices) ?? defaults.devices
        maxDevices = try c.decodeIfPresent(Int.self, forKey: .maxDevices)
        reconnect = try c.decodeIfPresent(ReconnectPolicy.self, forKey: .reconnect) ?? defaults.reconnect
        heartbeatSeriesSeconds =
            try c.decodeIfPresent(Double.self, forKey: .heartbeatSeriesSeconds) ?? defaults.heartbeatSeriesSeconds
        heartbeatSeriesMaxBeats =
            try c.decodeIfPresent(Int.self, forKey: .heartbeatSeriesMaxBeats) ?? defaults.heartbeatSeriesMaxBeats
        runningWindowSeconds =
            try c.decodeIfPresent(Double.self, forKey: .runningWindowSeconds) ?? defaults.runningWindowSeconds
        simulation = try c.decodeIfPresent(SimulationSettings.self, forKey: .simulation) ?? defaults.simulation
    }

    /// The number of devices followed at once, after defaults.
    public var effectiveMaxDevices: Int {
        maxDevices ?? (transport == .simulated ? simulation.heartRateMonitors + simulation.footPods : 1)
    }
}

/// Settings of the simulated transport (`transport: "simulated"`).
public struct SimulationSettings: Decodable, Sendable, Hashable {
    /// Simulated heart-rate monitors (default 1).
    public var heartRateMonitors: Int
    /// Simulated running foot pods (default 0).
    public var footPods: Int
    /// Notifications per second per device (default 1, as real monitors send).
    public var notificationsPerSecond: Double

    /// Settings with the given device counts and rate.
    public init(heartRateMonitors: Int = 1, footPods: Int = 0, notificationsPerSecond: Double = 1) {
        self.heartRateMonitors = heartRateMonitors
        self.footPods = footPods
        self.notificationsPerSecond = notificationsPerSecond
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case heartRateMonitors, footPods, notificationsPerSecond }

    /// Decodes `simulation`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = SimulationSettings()
        heartRateMonitors = try c.decodeIfPresent(Int.self, forKey: .heartRateMonitors) ?? defaults.heartRateMonitors
        footPods = try c.decodeIfPresent(Int.self, forKey: .footPods) ?? defaults.footPods
        notificationsPerSecond =
            try c.decodeIfPresent(Double.self, forKey: .notificationsPerSecond) ?? defaults.notificationsPerSecond
    }
}

/// Which peripherals the source follows. Whatever the selection, the source checks every
/// discovered device itself, because BlueZ merges the discovery filters of all its clients.
public enum DeviceSelection: Decodable, Sendable, Hashable {
    /// Any device advertising Heart Rate (0x180D) or Running Speed and Cadence (0x1814).
    case any
    /// Devices matching one of these matchers.
    case matching([DeviceMatcher])

    /// `"any"`, or an array of `{"address": "AA:BB:…"}`, `{"name": "Polar H10*"}`, or plain
    /// strings (an address if it looks like one, else a name pattern).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard text == "any" else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected \"any\" or an array of device matchers, got \"\(text)\"")
            }
            self = .any
            return
        }
        let matchers = try container.decode([DeviceMatcher].self)
        guard !matchers.isEmpty else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "an empty device list matches nothing; use \"any\"")
        }
        self = .matching(matchers)
    }
}

/// One device matcher: an exact address or a name glob (`*` any run, `?` one character).
public enum DeviceMatcher: Decodable, Sendable, Hashable {
    case address(String)
    case name(String)

    enum CodingKeys: String, CodingKey, CaseIterable { case address, name }

    /// Decodes a plain string or an object with exactly one of `address` and `name`.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            if DeviceMatcher.isAddress(text) {
                self = .address(text.uppercased())
            } else if text.isEmpty {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "empty device matcher")
            } else {
                self = .name(text)
            }
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch (try c.decodeIfPresent(String.self, forKey: .address), try c.decodeIfPresent(String.self, forKey: .name)) {
        case (let address?, nil):
            guard DeviceMatcher.isAddress(address) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .address, in: c, debugDescription: "\"\(address)\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
            }
            self = .address(address.uppercased())
        case (nil, let name?):
            guard !name.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .name, in: c, debugDescription: "empty name pattern")
            }
            self = .name(name)
        default:
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "give exactly one of \"address\" or \"name\""))
        }
    }

    /// Whether `text` is six colon-separated hex octets.
    public static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}

/// Reconnect backoff: the n-th consecutive failed attempt waits `initialDelay × multiplierⁿ⁻¹`,
/// capped at `maximumDelay`. Attempts never stop.
public struct ReconnectPolicy: Decodable, Sendable, Hashable, RenamedConfigurationKeys {
    /// The wait after the first failure (and after a link loss).
    public var initialDelay: Duration
    /// The longest wait.
    public var maximumDelay: Duration
    /// The growth factor per consecutive failure (≥ 1).
    public var multiplier: Double

    /// A policy; the defaults are 1 s, 60 s, ×2.
    public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60), multiplier: Double = 2) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
    }

    /// The wait before attempt `attempt + 1`, for `attempt` ≥ 1 consecutive failures.
    public func delay(afterFailures attempt: Int) -> Duration {
        let exponent = Double(max(0, attempt - 1))
        let seconds = initialDelay.seconds * pow(multiplier, min(exponent, 64))
        return seconds >= maximumDelay.seconds || !seconds.isFinite ? maximumDelay : .seconds(seconds)
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case initialDelaySeconds, maxDelaySeconds, multiplier }

    /// Old key names, suggested when they are used.
    public static let renamedKeys = ["initialDelay": "initialDelaySeconds", "maxDelay": "maxDelaySeconds"]
    /// The allowed `initialDelaySeconds`.
    public static let initialDelayRange: ClosedRange<Double> = 0.01...3600
    /// The allowed `maxDelaySeconds`: up to a day.
    public static let maxDelayRange: ClosedRange<Double> = 0.01...86_400
    /// The allowed `multiplier`.
    public static let multiplierRange: ClosedRange<Double> = 1...10

    /// `{"initialDelaySeconds": 1, "maxDelaySeconds": 60, "multiplier": 2}`; every number is
    /// range-checked here, because a `Duration` made from an out-of-range number traps.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ReconnectPolicy()
        let initial = try c.decodeIfPresent(Double.self, forKey: .initialDelaySeconds) ?? defaults.initialDelay.seconds
        let maximum = try c.decodeIfPresent(Double.self, forKey: .maxDelaySeconds) ?? defaults.maximumDelay.seconds
        let multiplier = try c.decodeIfPresent(Double.self, forKey: .multiplier) ?? defaults.multiplier
        func check(_ key: CodingKeys, _ value: Double, _ range: ClosedRange<Double>) throws {
            guard range.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: c, debugDescription: PluginConfigurationError.outOfRange(key.stringValue, value, range).reason)
            }
        }
        try check(.initialDelaySeconds, initial, Self.initialDelayRange)
        try check(.maxDelaySeconds, maximum, Self.maxDelayRange)
        try check(.multiplier, multiplier, Self.multiplierRange)
        guard maximum >= initial else {
            throw DecodingError.dataCorruptedError(
                forKey: .maxDelaySeconds, in: c,
                debugDescription: "must be at least initialDelaySeconds (\(ConfigurationDecoder.format(initial)))")
        }
        self.init(initialDelay: .seconds(initial), maximumDelay: .seconds(maximum), multiplier: multiplier)
    }
}

extension HeartRateSourceConfiguration {
    /// The allowed `maxDevices`.
    public static let maxDevicesRange = 1...64
    /// The allowed `heartbeatSeriesSeconds` and `runningWindowSeconds`.
    public static let windowRange: ClosedRange<Double> = 1...3600
    /// The allowed `heartbeatSeriesMaxBeats`.
    public static let maxBeatsRange = 1...100_000

    /// ``validate()``; the settings are the configuration itself.
    public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> HeartRateSourceConfiguration {
        try validate()
        return self
    }

    /// Checks every value that decodes but cannot work; no I/O.
    /// - Throws: ``PluginConfigurationError`` naming the key.
    public func validate() throws(PluginConfigurationError) {
        if let maxDevices {
            try PluginConfigurationError.check("maxDevices", maxDevices, in: Self.maxDevicesRange, unit: "devices")
        }
        if let adapter, adapter.isEmpty || adapter.contains("/") {
            throw PluginConfigurationError(keyPath: "adapter", reason: "expected an adapter name like \"hci0\", got \"\(adapter)\"")
        }
        try PluginConfigurationError.check("heartbeatSeriesSeconds", heartbeatSeriesSeconds, in: Self.windowRange, unit: "seconds")
        try PluginConfigurationError.check("heartbeatSeriesMaxBeats", heartbeatSeriesMaxBeats, in: Self.maxBeatsRange, unit: "beats")
        try PluginConfigurationError.check("runningWindowSeconds", runningWindowSeconds, in: Self.windowRange, unit: "seconds")
        try PluginConfigurationError.check("simulation.heartRateMonitors", simulation.heartRateMonitors, in: 0...16)
        try PluginConfigurationError.check("simulation.footPods", simulation.footPods, in: 0...16)
        guard simulation.notificationsPerSecond > 0, simulation.notificationsPerSecond <= 100 else {
            throw PluginConfigurationError(keyPath: "simulation.notificationsPerSecond", reason: "must be above 0 and at most 100")
        }
        if transport == .simulated, simulation.heartRateMonitors + simulation.footPods == 0 {
            throw PluginConfigurationError(keyPath: "simulation", reason: "simulates no device")
        }
    }
}

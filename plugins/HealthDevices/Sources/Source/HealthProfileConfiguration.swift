public import BLEProfileKit
import BLETransport
public import GatewayRuntime

/// The `ble-health` source's own `config` keys, beside the shared Bluetooth keys
/// (``BluetoothSharedConfiguration``): only its simulator's, declared once in
/// ``configurationKeys``.
public struct HealthProfileConfiguration: Sendable, BluetoothProfileConfiguration {
    /// The simulated transport's devices and interval.
    public var simulation = HealthSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    public init(simulation: HealthSimulationConfiguration) {
        self.simulation = simulation
    }

    public static var configurationKeys: [ConfigurationKey<Self>] { [.simulation(\.simulation)] }
}

/// The simulated transport's devices (`simulation`, with `transport: "simulated"`): one of each
/// kind, each measuring every 20 seconds.
public struct HealthSimulationConfiguration: Sendable, BluetoothSimulation {
    /// Simulated weight scales.
    public var scales = 1
    /// Simulated blood pressure cuffs.
    public var cuffs = 1
    /// Simulated thermometers.
    public var thermometers = 1
    /// Simulated pulse oximeters.
    public var oximeters = 1
    /// Simulated glucose meters.
    public var glucoseMeters = 1
    /// Seconds between two measurements of one device.
    public var measurementIntervalSeconds: Double = 20

    /// Every key at its default.
    public init() {}

    /// The counts and interval given, every other at its default.
    public init(
        scales: Int? = nil, cuffs: Int? = nil, thermometers: Int? = nil, oximeters: Int? = nil, glucoseMeters: Int? = nil,
        measurementIntervalSeconds: Double? = nil
    ) {
        if let scales { self.scales = scales }
        if let cuffs { self.cuffs = cuffs }
        if let thermometers { self.thermometers = thermometers }
        if let oximeters { self.oximeters = oximeters }
        if let glucoseMeters { self.glucoseMeters = glucoseMeters }
        if let measurementIntervalSeconds { self.measurementIntervalSeconds = measurementIntervalSeconds }
    }

    /// The allowed `measurementIntervalSeconds`.
    public static let measurementIntervalRange: ClosedRange<Double> = 1...3600

    /// The device counts, each key declared once: the keys and ``counts`` come from here.
    private static var deviceCounts: [(key: String, keyPath: any WritableKeyPath<Self, Int> & Sendable, description: String)] {
        [
            ("scales", \.scales, "Simulated weight scales with body composition"),
            ("cuffs", \.cuffs, "Simulated blood pressure cuffs"),
            ("thermometers", \.thermometers, "Simulated thermometers"),
            ("oximeters", \.oximeters, "Simulated pulse oximeters"),
            ("glucoseMeters", \.glucoseMeters, "Simulated glucose meters"),
        ]
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        deviceCounts.map { .simulatedCount($0.key, $0.keyPath, $0.description) } + [
            ConfigurationKey(
                "measurementIntervalSeconds", \.measurementIntervalSeconds, .number(measurementIntervalRange, unit: "seconds"),
                "Seconds between two measurements of one simulated device"),
        ]
    }

    /// Each device count by its key.
    public var counts: [(key: String, count: Int)] {
        Self.deviceCounts.map { ($0.key, self[keyPath: $0.keyPath]) }
    }

    /// How many devices are simulated in all (``BluetoothSimulation``).
    public var deviceCount: Int { counts.reduce(0) { $0 + max(0, $1.count) } }
}

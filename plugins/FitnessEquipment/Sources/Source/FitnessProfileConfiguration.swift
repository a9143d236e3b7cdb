public import BLEProfileKit
import BLETransport
public import GatewayRuntime

/// The `ble-fitness` source's own `config` keys, beside the shared Bluetooth keys
/// (``BluetoothSharedConfiguration``), each declared once in ``configurationKeys`` with its
/// default the value `init()` gives it. Every key is optional; see the plugin's README.md and
/// sample-config.json.
public struct FitnessProfileConfiguration: Sendable, BluetoothProfileConfiguration {
    /// The wheel's circumference for wheel revolutions, millimetres (2105, a 700×25C road tyre).
    public var wheelCircumferenceMillimeters: Double = 2105
    /// A wheel or crank whose event time has not changed for this long is stopped (seconds).
    public var stopTimeoutSeconds: Double = 3
    /// The simulated transport's devices and rate.
    public var simulation = FitnessSimulationConfiguration()

    /// Every key at its default.
    public init() {}

    /// The keys given, every other at its default.
    public init(
        wheelCircumferenceMillimeters: Double? = nil, stopTimeoutSeconds: Double? = nil, simulation: FitnessSimulationConfiguration? = nil
    ) {
        if let wheelCircumferenceMillimeters { self.wheelCircumferenceMillimeters = wheelCircumferenceMillimeters }
        if let stopTimeoutSeconds { self.stopTimeoutSeconds = stopTimeoutSeconds }
        if let simulation { self.simulation = simulation }
    }

    /// The allowed `wheelCircumferenceMillimeters`: from a folding bike's 16-inch wheel to a
    /// fat bike's 29-inch one, with room.
    public static let wheelRange: ClosedRange<Double> = 500...3500
    /// The allowed `stopTimeoutSeconds`.
    public static let stopTimeoutRange: ClosedRange<Double> = 1...60

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey(
                "wheelCircumferenceMillimeters", \.wheelCircumferenceMillimeters, .number(wheelRange, unit: "millimetres"),
                "The bike wheel's circumference, for speed and distance"),
            ConfigurationKey(
                "stopTimeoutSeconds", \.stopTimeoutSeconds, .number(stopTimeoutRange, unit: "seconds"),
                "A sensor whose counts stop changing this long reads zero"),
            .simulation(\.simulation),
        ]
    }
}

/// The simulated transport's devices (`simulation`, with `transport: "simulated"`).
public struct FitnessSimulationConfiguration: Sendable, BluetoothSimulation {
    /// Simulated bikes, each with a speed and cadence sensor and a power meter.
    public var bikes = 1
    /// Simulated rowers, Fitness Machines sending Rower Data.
    public var rowers = 0
    /// Notifications per second per characteristic (1, as real sensors send).
    public var notificationsPerSecond: Double = 1

    /// Every key at its default.
    public init() {}

    /// The counts and rate given, every other at its default.
    public init(bikes: Int? = nil, rowers: Int? = nil, notificationsPerSecond: Double? = nil) {
        if let bikes { self.bikes = bikes }
        if let rowers { self.rowers = rowers }
        if let notificationsPerSecond { self.notificationsPerSecond = notificationsPerSecond }
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .simulatedCount("bikes", \.bikes, "Simulated bikes (speed and cadence sensor and power meter)"),
            .simulatedCount("rowers", \.rowers, "Simulated rowers (Fitness Machine)"),
            .notificationRate(\.notificationsPerSecond),
        ]
    }

    /// The bikes and the rowers.
    public var deviceCount: Int { bikes + rowers }
}

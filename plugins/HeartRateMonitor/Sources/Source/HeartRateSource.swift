import AsyncPrimitives
import HealthModel
public import SampleBus
import Foundation
import Synchronization

/// The `ble-heart-rate` source: Bluetooth LE heart-rate monitors (Heart Rate Service 0x180D) and
/// running foot pods (Running Speed and Cadence 0x1814).
///
/// `run` discovers devices with the transport, checks each against its own filter, and follows
/// up to `maxDevices` of them, each in a child task that connects, reads Device Information,
/// battery and body sensor location, subscribes to the measurements and reconnects forever with
/// backoff (``ReconnectStateMachine``). No Bluetooth is logged once and retried; it never ends
/// the source. Cancellation stops everything and flushes pending heartbeat series.
public struct HeartRateSource: SampleSource, ConfigurablePlugin {
    /// The `config` object; see ``HeartRateSourceConfiguration``.
    public typealias Configuration = HeartRateSourceConfiguration

    /// The plugin kind used in configuration files.
    public static let kind = "ble-heart-rate"
    /// One line for `healthgate plugins`.
    public static let summary = "Bluetooth LE heart-rate monitors and running foot pods (GATT 0x180D, 0x1814)."

    /// The validated configuration.
    public let configuration: HeartRateSourceConfiguration
    let environment: PluginEnvironment
    let transport: any BLECentralTransport

    /// Validates the configuration and makes the configured transport.
    /// - Throws: ``PluginConfigurationError`` with the offending key.
    public init(configuration: HeartRateSourceConfiguration, environment: PluginEnvironment) throws {
        try Self.validate(configuration)
        let transport: any BLECentralTransport
        switch configuration.transport {
        case .bluez:
            transport = try makeBlueZTransport(adapter: configuration.adapter, environment: environment)
        case .simulated:
            transport = SimulatedBLETransport(clock: environment.clock, settings: configuration.simulation)
        }
        self.init(validated: configuration, environment: environment, transport: transport)
    }

    /// Uses `transport` instead of the configured one (tests, other stacks).
    /// - Throws: ``PluginConfigurationError`` with the offending key.
    public init(configuration: HeartRateSourceConfiguration, environment: PluginEnvironment, transport: any BLECentralTransport) throws {
        try Self.validate(configuration)
        self.init(validated: configuration, environment: environment, transport: transport)
    }

    private init(validated configuration: HeartRateSourceConfiguration, environment: PluginEnvironment, transport: any BLECentralTransport) {
        self.configuration = configuration
        self.environment = environment
        self.transport = transport
    }

    static func validate(_ configuration: HeartRateSourceConfiguration) throws(PluginConfigurationError) {
        try configuration.validate()
    }

    /// Builds the source from validated settings; the catalog's entry point.
    public init(settings: HeartRateSourceConfiguration, environment: PluginEnvironment) throws {
        try self.init(configuration: settings, environment: environment)
    }

    /// A configuration for `healthgate demo`: the simulated transport with these devices.
    public static func demoConfiguration(
        heartRateMonitors: Int = 1, footPods: Int = 0, notificationsPerSecond: Double = 1
    ) -> JSONValue {
        .object([
            "transport": .string("simulated"),
            "maxDevices": .number(Double(max(1, heartRateMonitors + footPods))),
            "simulation": .object([
                "heartRateMonitors": .number(Double(heartRateMonitors)),
                "footPods": .number(Double(footPods)),
                "notificationsPerSecond": .number(notificationsPerSecond),
            ]),
        ])
    }

    /// The stable identity rule: the BLE address, unless Device Information gives a plausible
    /// serial number AND a manufacturer name, in which case `manufacturer/serial` (devices with
    /// rotating private addresses keep their serial; the manufacturer keeps serials of different
    /// vendors apart). A serial is plausible when it has at least 4 characters, at least 2
    /// distinct ones, and is not a placeholder such as "unknown" or "0123456789".
    public static func localIdentifier(address: String, manufacturer: String?, serialNumber: String?) -> String {
        guard let serial = serialNumber, let manufacturer, serial.count >= 4, Set(serial).count >= 2,
            !["unknown", "n/a", "na", "none", "serial", "0123456789", "123456789", "12345678", "123456", "1234"]
                .contains(serial.lowercased())
        else { return address }
        return "\(manufacturer)/\(serial)"
    }

    /// Discovers and follows devices until cancelled; see the type's documentation. Only
    /// cancellation ends it (it throws `CancellationError`): transport failures are retried.
    public func run(context: SourceContext) async throws {
        let filter = DeviceFilter(selection: configuration.devices)
        let maxDevices = configuration.effectiveMaxDevices
        let logger = context.logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            var followed: [String: AsyncCondition<Bool>] = [:]
            var failures = 0
            var unavailableLogged = false
            while !Task.isCancelled {
                do {
                    for try await event in transport.discover(services: DeviceFilter.services) {
                        if unavailableLogged {
                            logger.notice("Bluetooth is available again")
                            context.status.setDetail("bluetooth", nil)
                            context.status.clearError()
                            unavailableLogged = false
                        }
                        failures = 0
                        switch event {
                        case .found(let peripheral):
                            let address = peripheral.address.uppercased()
                            if let presence = followed[address] {
                                presence.set(true)
                            } else if filter.matches(peripheral) {
                                guard followed.count < maxDevices else {
                                    logger.debug("ignoring \(address): already following \(maxDevices) device(s)", device: peripheral.name ?? address)
                                    continue
                                }
                                let presence = AsyncCondition(true)
                                followed[address] = presence
                                let session = DeviceSession(
                                    peripheral: peripheral, configuration: configuration, transport: transport,
                                    context: context, ids: environment.ids, presence: presence)
                                logger.info("following \(address)", device: session.displayName)
                                group.addTask { try await session.run() }
                            }
                        case .lost(let address):
                            if let presence = followed[address.uppercased()] {
                                presence.set(false)
                                logger.info("\(address.uppercased()) is no longer discovered", device: address.uppercased())
                            }
                        }
                    }
                    // The stream ended without an error: discover again after a pause.
                    failures += 1
                } catch let error as BLETransportError where error.code == .unavailable {
                    failures += 1
                    if !unavailableLogged {
                        logger.error("no Bluetooth: \(error.message); retrying until it appears")
                        unavailableLogged = true
                    }
                    context.status.setDetail("bluetooth", "unavailable")
                    context.status.reportError("no Bluetooth: \(error.message)", at: context.clock.now())
                } catch is CancellationError {
                    break
                } catch {
                    failures += 1
                    logger.warning("discovery failed: \(error)")
                    context.status.reportError("discovery failed: \(error)", at: context.clock.now())
                }
                try await context.clock.sleep(for: configuration.reconnect.delay(afterFailures: failures))
            }
            group.cancelAll()
            try await group.waitForAll()
        }
        try Task.checkCancellation()
    }
}

import ANTProtocol
import FoundationEssentials
import GatewayRuntime
import HealthModel
public import LinuxSystem
public import SampleBus
public import SerialDevices

/// ANT+ heart-rate straps (device type 120) heard through a USB ANT stick in continuous scan
/// mode: one stick, one channel, a whole class (see plugins/ANTHeartRate/README.md).
///
/// A member of the serial device family: the stick is a tty carrying the ANT serial protocol
/// (`path`, or every stick the udev rule 71-healthgate-ant.rules tags, hot-plugged). Per stick,
/// an ``ANTStickSession`` sets the stick up and turns each strap's broadcasts into `heartRate`
/// samples (one per new beat) and heartbeat series, the way the Bluetooth straps' are; each
/// strap's checkpoint travels with its samples so a restart continues after the last beat the
/// store holds. With `transport: simulated` the source plays a ``SimulatedANTStick`` on a
/// pseudo-terminal and reads it like a stick.
///
/// `run` returns only by cancellation; a stick that goes away is reopened (path) or picked up
/// again when udev announces it.
public struct ANTHeartRateSource: SerialDeviceFamilySource, PayloadDecoding {
    public static let kind = "ant-heart-rate"
    public static let summary = "ANT+ heart-rate straps, a whole class through one USB ANT stick (continuous scan)"
    /// `healthgate --help`.
    public static let devicesRead = "ANT+ heart-rate straps through a USB ANT stick"

    /// The ttys 71-healthgate-ant.rules tags `HEALTHGATE_ADAPTER=ant-heart-rate` (ANT USB sticks,
    /// vendor 0fcf).
    public static let udevMatch = SerialDeviceMatch(
        kind: kind, protocols: [protocolName], defaultProtocol: protocolName, rulesFile: "71-healthgate-ant.rules")

    /// The one protocol: the ANT serial protocol.
    public static let protocolName = "ant"

    /// The line settings of a stick's tty. The USB sticks ignore the rate (usb_serial_simple,
    /// cp210x at the stick's own rate); 115200 8N1 is what the ANT USB-m documents.
    public static let serialConfiguration = SerialConfiguration(baudRate: 115_200)

    /// The straps of the demo's class.
    public static let demoStraps = 6

    /// A class of six simulated straps through a simulated stick, in every `healthgate demo`; the
    /// demo gives each strap to a participant of its own (``SerialDeviceDemoRun/wornDevices``), so
    /// the class shows on the board as tiles of its own.
    public static var demo: SerialDeviceDemo? {
        SerialDeviceDemo(
            name: demoName, device: "ANT+ class (\(demoStraps) straps through a simulated stick)",
            start: { clock, _ in demoRun(straps: demoStraps, clock: clock) },
            classLimit: ANTSimulationConfiguration.strapsRange.upperBound,
            startClass: { straps, clock, _ in demoRun(straps: straps, clock: clock) })
    }

    /// The demo source's name, which seeds its simulated straps' ids.
    static let demoName = "demo-ant-class"

    /// The demo's simulated stick with `straps` straps, each given to a participant of its own.
    static func demoRun(straps: Int, clock: any GatewayClock) -> SerialDeviceDemoRun {
        SerialDeviceDemoRun(
            configuration: .object(["transport": .string("simulated"), "simulation": .object(["straps": .number(Double(straps))])]),
            // The ids the source's simulated stick will play: it seeds them with the source's name.
            wornDevices: SimulatedANTStick.strapIdentifiers(count: straps, seed: demoName).map(\.description),
            run: {
                // The source plays the simulated stick itself: nothing to run beside it.
                while true { try await clock.sleep(for: .seconds(3600)) }
            })
    }

    /// `healthgate scan --kind ant`: the straps a stick hears.
    public static var scan: SerialDeviceScan? { ANTScan.scan }

    /// `healthgate decode ant-hrm HEX`.
    public static var payloadDecoders: [PayloadDecoder] { ANTPayloadDecoders.all }

    /// The validated settings.
    public let settings: ANTHeartRateSettings
    private let environment: PluginEnvironment

    /// Builds the source from its settings (``ANTHeartRateConfiguration/validated(in:)``).
    public init(settings: ANTHeartRateSettings, environment: PluginEnvironment) {
        self.settings = settings
        self.environment = environment
    }

    /// Runs until cancelled; see the type's documentation.
    public func run(context: SourceContext) async throws {
        switch settings.transport {
        case .stick:
            try await read(settings.endpoint, context: context)
        case .simulated:
            let stick = try SimulatedANTStick(
                straps: settings.straps, networkKey: settings.networkKey, seed: environment.name, clock: context.clock,
                logger: context.logger)
            context.status.setDetail("simulation", "\(settings.straps) straps on \(stick.devicePath)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await stick.run() }
                group.addTask { try await read(.path(stick.devicePath), context: context) }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    private func read(_ endpoint: SerialEndpoint, context: SourceContext) async throws {
        let connection = SerialConnectionSettings(
            endpoint: endpoint, serial: Self.serialConfiguration, protocolName: Self.protocolName, maximumLineLength: 256,
            exclusive: true, reconnectInterval: .seconds(2), deviceName: nil)
        let connector = SerialDeviceConnector(settings: connection, match: Self.udevMatch)
        try await connector.run(context: context) { [settings, environment] connection in
            let stick = connection.device.localIdentifier ?? connection.stream.name
            do {
                return try await ANTStickSession(
                    context: context, settings: settings, ids: environment.ids, connection: connection.stream, stick: stick,
                    clockTrust: environment.clockTrust
                ).run()
            } catch let error as ANTStickError {
                // The source fails with it (the supervisor logs it, reports it in status and
                // restarts the source with backoff, which opens the stick afresh).
                connection.stream.close()
                throw error
            }
        }
    }
}

import FoundationEssentials
import HealthModel
import LinuxSystem
import GatewayRuntime
public import SampleBus
public import SerialDevices

/// Serial pedometers (HGP/1 and future protocols) over a USB serial tty, a pty, a bound
/// `/dev/rfcommN`, or a direct RFCOMM socket, found by path or through udev hotplug.
///
/// Each reading of the device's cumulative step counter becomes a `stepCount` sample (and a
/// `distanceWalkingRunning` sample when the device sends distance) covering the interval since
/// the previous reading. The counter per device travels with those samples as a source checkpoint
/// (``CounterCheckpoint``) that the SQLite store commits in the same transaction, so a restart,
/// even after kill -9, neither loses nor double-counts steps, and a device that moves to another
/// port or source continues its count (see the README's "Counting" and "Durability" sections).
///
/// `run` returns only by cancellation (or throws for an unusable udev monitor); a device that
/// goes away is reopened (path, rfcomm) or picked up again when udev announces it.
public struct SerialPedometerSource: SerialDeviceFamilySource {
    public static let kind = "serial-pedometer"
    public static let summary = "Serial pedometers (HGP/1) on a tty, pty, /dev/rfcommN, RFCOMM socket or udev hotplug"
    /// `healthgate --help`.
    public static let devicesRead = "serial pedometers over USB or RFCOMM"

    /// Where the pedometer is.
    public typealias Endpoint = SerialEndpoint

    /// The ttys our rules tag `HEALTHGATE_ADAPTER=serial-pedometer` (udev-rules/70-healthgate-pedometer.rules).
    public static let udevMatch = SerialDeviceMatch(
        kind: kind, protocols: PedometerProtocols.names, defaultProtocol: HGPTextDecoder.name,
        rulesFile: "70-healthgate-pedometer.rules")

    /// A simulated pedometer on a pseudo-terminal (``SerialPedometerDemo``).
    public static var demo: SerialDeviceDemo? {
        SerialDeviceDemo(name: "demo-pedometer", device: "pedometer") { clock, logger in
            let started = try SerialPedometerDemo.start(clock: clock, logger: logger)
            return SerialDeviceDemoRun(configuration: started.configuration, run: started.run)
        }
    }

    /// The validated shared settings: where the pedometer is, the line, the protocol, the
    /// opening policy.
    public let connection: SerialConnectionSettings
    public let identificationTimeout: Duration
    public let counter: StepCounter
    private let environment: PluginEnvironment
    private let garbage = GarbageCounters()

    /// Where the pedometer is.
    public var endpoint: Endpoint { connection.endpoint }
    /// The longest accepted line.
    public var maximumLineLength: Int { connection.maximumLineLength }

    /// Builds the source from its settings (``SerialPedometerConfiguration/validated(in:)``).
    public init(settings: SerialPedometerSettings, environment: PluginEnvironment) {
        connection = settings.connection
        identificationTimeout = settings.identificationTimeout
        counter = StepCounter(wrapTolerance: settings.wrapTolerance, gapThreshold: settings.gapThresholdSeconds)
        self.environment = environment
    }

    /// Runs until cancelled; see the type's documentation. Counter baselines come from
    /// `context.checkpoints` when a device identifies itself.
    public func run(context: SourceContext) async throws {
        let session = SessionEnvironment(
            context: context, ids: environment.ids, counter: counter, garbage: garbage,
            identificationTimeout: identificationTimeout)
        let connector = SerialDeviceConnector(settings: connection, match: Self.udevMatch)
        try await connector.run(context: context) { [self] connection in
            try await runSession(
                connection.stream, device: connection.device, decoderName: connection.protocolName, environment: session)
        }
    }

    func runSession(
        _ connection: any ByteStreamConnection, device: Device, decoderName: String, environment: SessionEnvironment
    ) async throws -> ByteStreamEnd {
        guard let decoder = PedometerProtocols.decoder(named: decoderName, maximumLineLength: maximumLineLength) else {
            throw PluginConfigurationError(keyPath: "decoder", reason: "unknown decoder \"\(decoderName)\"")
        }
        var session = PedometerSession(
            environment: environment, connection: connection, decoder: decoder, transportDevice: device)
        return try await session.run()
    }
}

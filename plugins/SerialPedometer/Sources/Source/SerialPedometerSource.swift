import FoundationEssentials
import HealthModel
public import LinuxSystem
import GatewayRuntime
public import SampleBus
import Synchronization
import Udev
import Dispatch

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
public struct SerialPedometerSource: SampleSource, ConfigurablePlugin {
    public static let kind = "serial-pedometer"
    public static let summary = "Serial pedometers (HGP/1) on a tty, pty, /dev/rfcommN, RFCOMM socket or udev hotplug"

    /// Where the pedometer is.
    public enum Endpoint: Hashable, Sendable {
        case path(String)
        case rfcomm(BluetoothAddress, channel: UInt8)
        case udev
    }

    /// The validated settings.
    public let endpoint: Endpoint
    public let serial: SerialConfiguration
    public let decoderName: String
    public let maximumLineLength: Int
    public let exclusive: Bool
    public let reconnectInterval: Duration
    public let identificationTimeout: Duration
    public let counter: StepCounter
    public let deviceName: String?
    private let environment: PluginEnvironment
    private let garbage = GarbageCounters()

    /// Builds the source from its settings (``SerialPedometerConfiguration/validated(in:)``).
    public init(settings: SerialPedometerSettings, environment: PluginEnvironment) {
        endpoint = settings.endpoint
        serial = settings.serial
        decoderName = settings.decoderName
        maximumLineLength = settings.maximumLineLength
        exclusive = settings.exclusive
        reconnectInterval = settings.reconnectInterval
        identificationTimeout = settings.identificationTimeout
        counter = StepCounter(wrapTolerance: settings.wrapTolerance, gapThreshold: settings.gapThresholdSeconds)
        deviceName = settings.deviceName
        self.environment = environment
    }

    /// Runs until cancelled; see the type's documentation. Counter baselines come from
    /// `context.checkpoints` when a device identifies itself.
    public func run(context: SourceContext) async throws {
        let session = SessionEnvironment(
            context: context, ids: environment.ids, counter: counter, garbage: garbage,
            identificationTimeout: identificationTimeout)
        switch endpoint {
        case .path(let path):
            try await runReconnecting(name: path, context: context) {
                let device = Device(name: deviceName ?? path, localIdentifier: path)
                return try await withSerialPort(path: path, configuration: serial, exclusive: exclusive) { port in
                    context.status.setDetail("connection", "open \(path) \(serial.summary)")
                    context.logger.info("opened \(path) at \(serial.summary)", device: device.displayName)
                    return try await runSession(port, device: device, decoderName: decoderName, environment: session)
                }
            }
        case .rfcomm(let address, let channel):
            let name = "rfcomm://\(address)/\(channel)"
            try await runReconnecting(name: name, context: context) {
                let device = Device(name: deviceName ?? address.description, localIdentifier: address.description)
                let socket = try await RFCOMMSocket.connect(
                    address: address, channel: channel, queue: DispatchQueue(label: "healthgate.rfcomm"))
                defer { socket.close() }
                context.status.setDetail("connection", "connected \(name)")
                context.logger.info("connected \(name)", device: device.displayName)
                return try await runSession(socket, device: device, decoderName: decoderName, environment: session)
            }
        case .udev:
            try await runUdev(context: context, session: session)
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

    /// Opens, runs, and after any end or open failure waits ``reconnectInterval`` and tries
    /// again, until cancelled. Repeated identical failures are logged once.
    private func runReconnecting(
        name: String, context: SourceContext, _ attempt: () async throws -> ByteStreamEnd
    ) async throws {
        var lastFailure: String?
        while true {
            try Task.checkCancellation()
            do {
                let end = try await attempt()
                lastFailure = nil
                try Task.checkCancellation()
                context.status.setDetail("connection", "lost \(name): \(end)")
                context.logger.notice("\(name): \(end); reopening every \(reconnectInterval)", device: deviceName ?? name)
            } catch let error as SystemError {
                let message = error.description
                context.status.setDetail("connection", "waiting for \(name): \(error.errno)")
                if message != lastFailure {
                    context.logger.warning("\(message); retrying every \(reconnectInterval)", device: deviceName ?? name)
                    context.status.reportError(message)
                    lastFailure = message
                }
            }
            try await context.clock.sleep(for: reconnectInterval)
        }
    }
}

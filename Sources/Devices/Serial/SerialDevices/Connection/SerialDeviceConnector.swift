import Dispatch
import HealthModel
public import LinuxSystem
import GatewayRuntime
public import SampleBus

/// How every serial family member opens its devices: a `path` is opened (raw mode, the line
/// settings, locked when `exclusive`) and reopened every `reconnectInterval` after a hang-up or
/// a failed open; an `rfcomm` socket likewise; with `udev`, every tty tagged for the member is
/// opened when udev announces it and closed when it goes (``SerialDeviceDiscovery``).
///
/// The member supplies only the session: what to do with one open connection until its byte
/// stream ends. Status details (`connection`, `devices`) and the log lines are the connector's.
public struct SerialDeviceConnector: Sendable {
    /// The validated shared settings.
    public let settings: SerialConnectionSettings
    /// Which udev-tagged ttys are the member's.
    public let match: SerialDeviceMatch

    public init(settings: SerialConnectionSettings, match: SerialDeviceMatch) {
        self.settings = settings
        self.match = match
    }

    /// Opens the endpoint and runs `session` on each connection, until cancelled (then throws
    /// `CancellationError`) or, with `udev`, until the udev monitor cannot be created (throws
    /// its ``UdevError``). A session's return or failure to open is logged and retried; with
    /// `udev` each tty runs in a child task of its own.
    public func run(
        context: SourceContext, session: @escaping @Sendable (SerialConnection) async throws -> ByteStreamEnd
    ) async throws {
        let serial = settings.serial
        let deviceName = settings.deviceName
        switch settings.endpoint {
        case .path(let path):
            try await runReconnecting(name: path, context: context) {
                let device = Device(name: deviceName ?? path, localIdentifier: path)
                return try await withSerialPort(path: path, configuration: serial, exclusive: settings.exclusive) { port in
                    context.status.setDetail("connection", "open \(path) \(serial.summary)")
                    context.logger.info("opened \(path) at \(serial.summary)", device: device.displayName)
                    return try await session(SerialConnection(stream: port, device: device, protocolName: settings.protocolName))
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
                return try await session(SerialConnection(stream: socket, device: device, protocolName: settings.protocolName))
            }
        case .udev:
            try await SerialDeviceDiscovery(
                match: match, serial: serial, exclusive: settings.exclusive
            ).run(context: context, session: session)
        }
    }

    /// Opens, runs, and after any end or open failure waits ``SerialConnectionSettings/reconnectInterval``
    /// and tries again, until cancelled. Repeated identical failures are logged once.
    private func runReconnecting(
        name: String, context: SourceContext, _ attempt: () async throws -> ByteStreamEnd
    ) async throws {
        let interval = settings.reconnectInterval
        let deviceName = settings.deviceName
        var lastFailure: String?
        while true {
            try Task.checkCancellation()
            do {
                let end = try await attempt()
                lastFailure = nil
                try Task.checkCancellation()
                context.status.setDetail("connection", "lost \(name): \(end)")
                context.logger.notice("\(name): \(end); reopening every \(interval)", device: deviceName ?? name)
            } catch let error as SystemError {
                let message = error.description
                context.status.setDetail("connection", "waiting for \(name): \(error.errno)")
                if message != lastFailure {
                    context.logger.warning("\(message); retrying every \(interval)", device: deviceName ?? name)
                    context.status.reportError(message)
                    lastFailure = message
                }
            }
            try await context.clock.sleep(for: interval)
        }
    }
}

public import HealthModel
public import LinuxSystem
public import SampleBus
import GatewayRuntime
public import Udev

/// The ttys a serial family member follows through udev (`"udev": true`): every tty that
/// healthgate's rules tagged for the member (``SerialDeviceMatch``), opened when it is there at
/// start or plugged in later, each read by the member's session in a child task of its own, and
/// closed when udev announces its removal.
///
/// A tty that cannot be opened (permissions, busy) is logged and retried when udev next
/// announces it (replug, `udevadm trigger`).
public struct SerialDeviceDiscovery: Sendable {
    public let match: SerialDeviceMatch
    public let serial: SerialConfiguration
    /// Lock each tty against other openers (TIOCEXCL + flock).
    public let exclusive: Bool

    public init(match: SerialDeviceMatch, serial: SerialConfiguration, exclusive: Bool) {
        self.match = match
        self.serial = serial
        self.exclusive = exclusive
    }

    /// The identity udev gives a device before it identifies itself.
    public static func transportDevice(_ device: UdevDevice) -> Device {
        Device(
            name: device.model.map { "\($0) (\(device.sysname))" } ?? device.sysname,
            manufacturer: device.vendor, model: device.model,
            localIdentifier: device.serial ?? device.devnode ?? device.syspath)
    }

    /// Follows the tagged ttys until cancelled; throws a ``UdevError`` when the monitor cannot
    /// be created or the database cannot be read.
    public func run(
        context: SourceContext, session: @escaping @Sendable (SerialConnection) async throws -> ByteStreamEnd
    ) async throws {
        // Monitor first, then enumerate: a device plugged in between is seen at least once
        // (a duplicate is ignored by ActiveDevices.claim).
        let monitor = try UdevMonitor(subsystem: "tty")
        defer { monitor.stop() }
        let existing = try await Udev.devices(subsystem: "tty")
        let active = ActiveDevices()
        let (match, serial, exclusive) = (match, serial, exclusive)
        context.status.setDetail("connection", "watching udev (tty)")
        await withTaskGroup(of: Void.self) { group in
            func start(_ device: UdevDevice) {
                let eligibility = match.eligibility(of: device)
                let reason = eligibility.reason
                guard eligibility.eligible, let devnode = device.devnode else {
                    if device.healthgateAdapter != nil {
                        context.logger.info("not using \(device.sysname): \(reason)", device: device.devnode ?? device.sysname)
                    }
                    return
                }
                guard active.claim(device.syspath) else { return }
                let transport = Self.transportDevice(device)
                let protocolName = match.protocolName(of: device)
                group.addTask {
                    defer { active.release(device.syspath) }
                    do {
                        let port = try SerialPort.open(path: devnode, configuration: serial, exclusive: exclusive)
                        defer { port.close() }
                        active.attach(port, to: device.syspath)
                        context.logger.info("opened \(devnode) at \(serial.summary) (\(reason))", device: transport.displayName)
                        context.status.setDetail("devices", String(active.count))
                        let end = try await session(SerialConnection(stream: port, device: transport, protocolName: protocolName))
                        context.logger.notice("\(devnode): \(end)", device: transport.displayName)
                    } catch let error as SystemError {
                        // A device that cannot be opened (permissions, busy) is retried when udev
                        // next announces it (replug, `udevadm trigger`).
                        context.logger.error("\(error)", device: transport.displayName)
                        context.status.reportError("\(transport.displayName): \(error)")
                    } catch is CancellationError {
                        // The source is stopping; the port is closed by the defer above.
                    } catch {
                        context.logger.error("reader of \(devnode) failed: \(error)", device: transport.displayName)
                        context.status.reportError("\(transport.displayName): \(error)")
                    }
                    context.status.setDetail("devices", String(active.count - 1))
                }
            }
            for device in existing { start(device) }
            for await event in monitor.events {
                switch event.action {
                case .add, .change, .bind:
                    start(event.device)
                case .remove:
                    if event.device.healthgateAdapter == match.kind {
                        context.logger.info("\(event.device.sysname) removed", device: Self.transportDevice(event.device).displayName)
                    }
                    // Closing ends the reader if the hang-up has not already done so.
                    active.close(event.device.syspath)
                default:
                    break
                }
            }
            group.cancelAll()
        }
    }
}

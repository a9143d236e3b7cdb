import FoundationEssentials
import HealthModel
import LinuxSystem
import SampleBus
import GatewayRuntime
import Synchronization
public import Udev

/// The connections of udev-discovered devices, by syspath, so that a removal closes the right
/// one. Thread-safe.
final class ActiveDevices: Sendable {
    private let entries = Mutex<[String: (any ByteStreamConnection)?]>([:])

    /// Claims `syspath`; false if a reader already runs for it.
    func claim(_ syspath: String) -> Bool {
        entries.withLock { entries in
            guard entries[syspath] == nil else { return false }
            entries[syspath] = .some(nil)
            return true
        }
    }

    func attach(_ connection: any ByteStreamConnection, to syspath: String) {
        entries.withLock { $0[syspath] = .some(connection) }
    }

    func release(_ syspath: String) {
        _ = entries.withLock { $0.removeValue(forKey: syspath) }
    }

    /// Closes the connection of `syspath`; its reader ends and the reader task returns.
    func close(_ syspath: String) {
        let connection = entries.withLock { $0[syspath] ?? nil }
        connection?.close()
    }

    var count: Int { entries.withLock { $0.count } }
}

extension SerialPedometerSource {
    /// Whether healthgate's rules tagged `device` for this plugin, and why not if not.
    public static func eligibility(of device: UdevDevice) -> (eligible: Bool, reason: String) {
        guard device.devnode != nil else { return (false, "no device node") }
        guard let adapter = device.healthgateAdapter else {
            return (false, "not tagged by 70-healthgate-pedometer.rules (no HEALTHGATE_ADAPTER)")
        }
        guard adapter == kind else { return (false, "HEALTHGATE_ADAPTER=\(adapter) is another plugin's") }
        let decoder = device.healthgateDecoder ?? HGPTextDecoder.name
        guard PedometerProtocols.names.contains(decoder) else {
            return (false, "HEALTHGATE_DECODER=\(decoder) is not a compiled-in protocol")
        }
        return (true, "HEALTHGATE_ADAPTER=\(adapter), decoder \(decoder)")
    }

    /// The identity udev gives a device before it identifies itself.
    static func transportDevice(_ device: UdevDevice) -> Device {
        Device(
            name: device.model.map { "\($0) (\(device.sysname))" } ?? device.sysname,
            manufacturer: device.vendor, model: device.model,
            localIdentifier: device.serial ?? device.devnode ?? device.syspath)
    }

    func runUdev(context: SourceContext, session: SessionEnvironment) async throws {
        // Monitor first, then enumerate: a device plugged in between is seen at least once
        // (a duplicate is ignored by ActiveDevices.claim).
        let monitor = try UdevMonitor(subsystem: "tty")
        defer { monitor.stop() }
        let existing = try await Udev.devices(subsystem: "tty")
        let active = ActiveDevices()
        context.status.setDetail("connection", "watching udev (tty)")
        await withTaskGroup(of: Void.self) { group in
            func start(_ device: UdevDevice) {
                let (eligible, reason) = Self.eligibility(of: device)
                guard eligible, let devnode = device.devnode else {
                    if device.healthgateAdapter != nil {
                        context.logger.info("not using \(device.sysname): \(reason)", device: device.devnode ?? device.sysname)
                    }
                    return
                }
                guard active.claim(device.syspath) else { return }
                let transport = Self.transportDevice(device)
                let decoder = device.healthgateDecoder ?? decoderName
                group.addTask {
                    defer { active.release(device.syspath) }
                    do {
                        let port = try SerialPort.open(path: devnode, configuration: serial, exclusive: exclusive)
                        defer { port.close() }
                        active.attach(port, to: device.syspath)
                        context.logger.info("opened \(devnode) at \(serial.summary) (\(reason))", device: transport.displayName)
                        context.status.setDetail("devices", String(active.count))
                        let end = try await runSession(port, device: transport, decoderName: decoder, environment: session)
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
                    if event.device.healthgateAdapter == Self.kind {
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

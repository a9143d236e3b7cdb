import BLETransport
import Dispatch
import FoundationEssentials
import GatewayRuntime
import LinuxSystem
import Synchronization

/// Reads Device Found events from a management socket and hands each as an ``Advertisement``
/// (the ``ScanPath/managementSocket`` path).
///
/// A ``DatagramReader`` on its own serial queue reads the socket until `EAGAIN`; each event of
/// the scanned controller is decoded, stamped with the clock and passed to `deliver` on that
/// queue, in the kernel's order. Every report the controller passes reaches `deliver`, not only
/// changes: a repeated advertisement is a repeated call. An event that cannot be decoded is
/// logged (the first at warning, then at debug) and counted, and reading goes on. When the socket
/// ends or a read fails, `ended` is called once with the reason; ``close()`` stops reading without
/// calling it. The name comes from the event's data when it carries one, else from the last name
/// heard or told (``remember(name:address:)``): a non-connectable strap's reports often carry none.
///
/// ``addMonitor(patterns:)`` registers a kernel advertisement monitor through the socket, which
/// turns the controller's duplicate filter off while discovery runs; ``close()`` removes it.
/// The kernel sends each report once (net/bluetooth/mgmt.c, mgmt_adv_monitor_device_found): as
/// Device Found while discovery runs, else, while a monitor is registered, as an Advertisement
/// Monitor Device Found with handle 0 (between bluetoothd's discovery sessions the kernel scans
/// passively for the monitor). Both are reported. A monitor event with another handle is a
/// controller-offloaded monitor's first match, which repeats a Device Found: not reported.
final class ManagementAdvertisementReader: Sendable {
    /// What the reader's queue and the scan share.
    private final class Shared: Sendable {
        let names = Mutex<[String: String]>([:])
        let undecodable = Atomic<Int>(0)
        /// The kernel monitor's handle once the kernel added it.
        let monitor = Mutex<UInt16?>(nil)
    }

    private let reader: DatagramReader
    private let descriptor: FileDescriptor
    private let controller: UInt16
    private let logger: Logger
    private let shared: Shared

    /// Takes ownership of `descriptor` (closed by ``close()`` or when the socket ends).
    /// - Parameter controller: the controller's index (hci0 is 0); other controllers' events are skipped.
    /// - Throws: ``Errno`` when the descriptor cannot be made non-blocking (it is closed then).
    init(
        descriptor: FileDescriptor, controller: UInt16, clock: any GatewayClock, logger: Logger,
        deliver: @escaping @Sendable (Advertisement) -> Void, ended: @escaping @Sendable (String) -> Void
    ) throws(Errno) {
        let shared = Shared()
        self.shared = shared
        self.descriptor = descriptor
        self.controller = controller
        self.logger = logger
        let label = "hci\(controller)"
        reader = try DatagramReader(
            // Device Found carries at most an extended advertisement and its scan response
            // (1 650 bytes each, Core Vol 6 Part B §2.3.4.9); a longer event is cut by the kernel
            // and then fails to decode (counted), never overruns.
            descriptor: descriptor, maximumLength: 4096, queue: DispatchQueue(label: "healthgate.bluez.mgmt"),
            deliver: { datagram in
                do {
                    let event = try ManagementEvent.decode(datagram)
                    switch event.kind {
                    case .commandComplete(ManagementCommand.addAdvertisementPatternsMonitor, let status, let parameters):
                        guard status == 0, parameters.count >= 2 else {
                            logger.warning(
                                "the kernel refused the advertisement monitor on \(label) (status 0x\(String(status, radix: 16))): "
                                    + "the controller's duplicate filter may hide repeated advertisements")
                            return
                        }
                        let handle = UInt16(parameters[0]) | UInt16(parameters[1]) << 8
                        shared.monitor.withLock { $0 = handle }
                        logger.info("kernel advertisement monitor \(handle) added on \(label): the controller's duplicate filter is off")
                        return
                    case .commandStatus(ManagementCommand.addAdvertisementPatternsMonitor, let status):
                        logger.warning(
                            "the kernel refused the advertisement monitor on \(label) (status 0x\(String(status, radix: 16))): "
                                + "the controller's duplicate filter may hide repeated advertisements")
                        return
                    default:
                        break
                    }
                    guard
                        let advertisement = try ManagementAdvertisementReader.advertisement(
                            event, controller: controller, at: clock.now(),
                            knownName: { address in shared.names.withLock { $0[address] } })
                    else { return }
                    if let name = advertisement.name {
                        shared.names.withLock { $0[advertisement.address] = name }
                    }
                    deliver(advertisement)
                } catch {
                    let count = shared.undecodable.add(1, ordering: .relaxed).newValue
                    if count == 1 {
                        logger.warning("undecodable management event (\(error)); later ones are logged at debug")
                    } else {
                        logger.debug("undecodable management event #\(count): \(error)")
                    }
                }
            },
            ended: { end in
                switch end {
                case .endOfFile: ended("the management socket was closed")
                case .failed(let errno): ended("reading the management socket failed: \(errno)")
                }
            })
    }

    /// The advertisement a decoded event reports for `controller`, or nil for another
    /// controller's event or an event that reports none. Pure.
    /// - Throws: ``ManagementEventError`` when the event's advertising data is cut short.
    static func advertisement(
        _ event: ManagementEvent, controller: UInt16, at date: Date, knownName: (String) -> String?
    ) throws(ManagementEventError) -> Advertisement? {
        guard event.controller == controller else { return nil }
        let found: ManagementDeviceFound
        switch event.kind {
        case .deviceFound(let report), .monitorDeviceFound(monitor: 0, let report): found = report
        case .monitorDeviceFound, .commandComplete, .commandStatus, .other: return nil
        }
        let fields = try AdvertisingDataFields.parse(found.data)
        return Advertisement(
            address: found.address, name: fields.name ?? knownName(found.address), rssi: found.rssi,
            manufacturerData: fields.manufacturerData, serviceData: fields.serviceData, receivedAt: date)
    }

    /// The controller index of a BlueZ adapter path (`/org/bluez/hci0` → 0), nil for another form.
    static func controllerIndex(adapterPath: String) -> UInt16? {
        guard let last = adapterPath.split(separator: "/").last, last.hasPrefix("hci") else { return nil }
        return UInt16(last.dropFirst(3))
    }

    /// Names `address` for its later reports that carry no name (BlueZ's Device1 `Name`).
    func remember(name: String, address: String) {
        shared.names.withLock { names in
            if names[address] == nil { names[address] = name }
        }
    }

    /// How many events could not be decoded.
    var undecodableEvents: Int { shared.undecodable.load(ordering: .relaxed) }

    /// Starts reading. Call once.
    func start() throws(Errno) {
        try reader.start()
    }

    /// Asks the kernel for an advertisement monitor of `patterns` on the controller (the answer
    /// is logged when it comes). False, with nothing sent, when the patterns make no command.
    /// - Throws: ``Errno`` when the command cannot be written.
    func addMonitor(patterns: [AdvertisingDataPattern]) throws(Errno) -> Bool {
        guard let command = ManagementCommand.addMonitor(controller: controller, patterns: patterns) else { return false }
        try descriptor.writeAll(command)
        return true
    }

    /// Removes the kernel monitor (when the kernel had added it), stops reading and closes the
    /// socket. Idempotent, from any thread. A monitor whose answer had not come yet stays until
    /// bluetoothd or the adapter resets.
    func close() {
        if let handle = shared.monitor.withLock({ handle -> UInt16? in
            defer { handle = nil }
            return handle
        }) {
            // A short command to a socket that takes it at once: writeAll does not wait.
            do {
                try descriptor.writeAll(ManagementCommand.removeMonitor(controller: controller, handle: handle))
            } catch {
                // ENOMEM: the kernel could not queue its answer to us (our receive buffer was
                // full); the removal itself may have been done.
                logger.warning(
                    "removing kernel advertisement monitor \(handle) on hci\(controller) was not confirmed (\(error)): "
                        + "it may stay until bluetoothd or the adapter restarts")
            }
        }
        reader.close()
    }
}

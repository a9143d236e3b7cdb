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
/// the scanned controller is decoded, stamped with the clock and kept, in the kernel's order, in
/// the reader's own buffer until the consumer takes them (``takeReports()``). Every report the
/// controller passes is kept, not only changes: a repeated advertisement is a repeated report.
/// The buffer is bounded (``bufferedReports``): when it is full the oldest report is dropped and
/// `dropped` is called (the consumer counts them). `ready` is called when the buffer stops being
/// empty, so that a consumer woken once takes everything read meanwhile: the reports never crowd
/// bluetoothd's signals out of the scan's loop, which gets one wake-up for any number of them.
/// An event that cannot be decoded is logged (the first at warning, then at debug) and counted,
/// and reading goes on. When the socket
/// ends or a read fails, `ended` is called once with the reason; ``close()`` stops reading without
/// calling it. The name comes from the event's data when it carries one, else from the last name
/// heard or told (``remember(name:address:)``): a non-connectable strap's reports often carry none.
///
/// ``addMonitor(patterns:)`` registers a kernel advertisement monitor through the socket, which
/// turns the controller's duplicate filter off while discovery runs; a later call replaces it (the
/// old monitor is removed once the kernel confirmed the new one, so the filter stays off).
/// ``close(within:)`` removes it while the socket is still read, and waits for the kernel's answer.
/// The kernel sends each report once (net/bluetooth/mgmt.c, mgmt_adv_monitor_device_found): as
/// Device Found while discovery runs, else, while a monitor is registered, as an Advertisement
/// Monitor Device Found with handle 0 (between bluetoothd's discovery sessions the kernel scans
/// passively for the monitor). Both are reported. A monitor event with another handle is a
/// controller-offloaded monitor's first match, which repeats a Device Found: not reported.
final class ManagementAdvertisementReader: Sendable {
    /// How the removal of the kernel monitor at ``close(within:)`` ended.
    enum Removal: Sendable, Equatable {
        /// No monitor was registered (none asked for, or the kernel refused it).
        case noMonitor
        /// The kernel answered the removal of `handle` with `status` (0: removed; mgmt-api.txt's
        /// status codes otherwise: 0x0A busy, 0x0D invalid parameters, 0x11 invalid index).
        case answered(handle: UInt16, status: UInt8)
        /// The command could not be written, also after the socket was read empty and it was
        /// sent again (ENOMEM: the kernel refused it at once and could not queue that answer).
        case notSent(handle: UInt16, Errno)
        /// No answer within the time given.
        case timedOut(handle: UInt16?)
    }

    /// The kernel monitor's state, and the close waiting for its removal.
    private struct MonitorState {
        /// The monitor's handle once the kernel added it.
        var handle: UInt16?
        /// Add commands written whose answer has not come.
        var addsPending = 0
        /// ``close(within:)`` began: reports are dropped, a monitor added now is removed at once.
        var closing = false
        /// The handle whose removal `waiter` awaits.
        var removing: UInt16?
        /// ``close(within:)`` waiting for the removal's outcome.
        var waiter: CheckedContinuation<Removal, Never>?

        /// Takes the waiter, to resume it once.
        mutating func finish() -> CheckedContinuation<Removal, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    /// What the reader's queue and the scan share.
    private final class Shared: Sendable {
        let names = Mutex<[String: String]>([:])
        let undecodable = Atomic<Int>(0)
        let monitor = Mutex(MonitorState())
        /// Reports read after ``close(within:)`` began, not handed on.
        let droppedAtClose = Atomic<Int>(0)
        /// Reports not taken yet, and whether the consumer was told of them.
        let pending = Mutex<(reports: [Advertisement], told: Bool)>(([], false))
    }

    /// How many reports the reader keeps for its consumer: a few seconds of a room of straps
    /// with the controller's duplicate filter off.
    static let bufferedReports = 2048

    private let reader: DatagramReader
    private let queue: DispatchQueue
    private let descriptor: FileDescriptor
    private let controller: UInt16
    private let logger: Logger
    private let shared: Shared

    /// Takes ownership of `descriptor` (closed by ``close()`` or when the socket ends).
    /// - Parameters:
    ///   - controller: the controller's index (hci0 is 0); other controllers' events are skipped.
    ///   - ready: called on the reader's queue when a report is kept while none was waiting.
    ///   - dropped: called on the reader's queue for each report dropped from a full buffer.
    /// - Throws: ``Errno`` when the descriptor cannot be made non-blocking (it is closed then).
    init(
        descriptor: FileDescriptor, controller: UInt16, clock: any GatewayClock, logger: Logger,
        ready: @escaping @Sendable () -> Void, dropped: @escaping @Sendable () -> Void,
        ended: @escaping @Sendable (String) -> Void
    ) throws(Errno) {
        let shared = Shared()
        self.shared = shared
        self.descriptor = descriptor
        self.controller = controller
        self.logger = logger
        let label = "hci\(controller)"
        let queue = DispatchQueue(label: "healthgate.bluez.mgmt")
        self.queue = queue
        // Writes a command from the reader's queue: the kernel takes a management command at
        // once (hci_sock_sendmsg handles it in the call), so writeAll does not wait.
        let send: @Sendable ([UInt8]) throws(Errno) -> Void = { bytes throws(Errno) in try descriptor.writeAll(bytes) }
        reader = try DatagramReader(
            // Device Found carries at most an extended advertisement and its scan response
            // (1 650 bytes each, Core Vol 6 Part B §2.3.4.9); a longer event is cut by the kernel
            // and then fails to decode (counted), never overruns.
            descriptor: descriptor, maximumLength: 4096, queue: queue,
            deliver: { datagram in
                do {
                    let event = try ManagementEvent.decode(datagram)
                    if Self.answer(event, shared: shared, label: label, logger: logger, send: send) { return }
                    if shared.monitor.withLock({ $0.closing }) {
                        shared.droppedAtClose.add(1, ordering: .relaxed)
                        return
                    }
                    guard
                        let advertisement = try ManagementAdvertisementReader.advertisement(
                            event, controller: controller, at: clock.now(),
                            knownName: { address in shared.names.withLock { $0[address] } })
                    else { return }
                    if let name = advertisement.name {
                        shared.names.withLock { $0[advertisement.address] = name }
                    }
                    let (tell, overflowed) = shared.pending.withLock { pending -> (Bool, Bool) in
                        let overflowed = pending.reports.count >= Self.bufferedReports
                        if overflowed { pending.reports.removeFirst() }
                        pending.reports.append(advertisement)
                        defer { pending.told = true }
                        return (!pending.told, overflowed)
                    }
                    if overflowed { dropped() }
                    if tell { ready() }
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

    /// The reports read since the last call, oldest first; the next report read calls `ready` again.
    func takeReports() -> [Advertisement] {
        shared.pending.withLock { pending in
            defer { pending = ([], false) }
            return pending.reports
        }
    }

    /// How many events could not be decoded.
    var undecodableEvents: Int { shared.undecodable.load(ordering: .relaxed) }

    /// Starts reading. Call once.
    func start() throws(Errno) {
        try reader.start()
    }

    /// Asks the kernel for an advertisement monitor of `patterns` on the controller (the answer
    /// is logged when it comes). When a monitor was added before, it is removed once the kernel
    /// confirmed this one. False, with nothing sent, when the patterns make no command.
    /// - Throws: ``Errno`` when the command cannot be written.
    func addMonitor(patterns: [AdvertisingDataPattern]) throws(Errno) -> Bool {
        guard let command = ManagementCommand.addMonitor(controller: controller, patterns: patterns) else { return false }
        shared.monitor.withLock { $0.addsPending += 1 }
        do {
            try descriptor.writeAll(command)
        } catch {
            shared.monitor.withLock { $0.addsPending -= 1 }
            throw error
        }
        return true
    }

    /// Handles the kernel's answer to a command this reader sent: true when `event` is one
    /// (Command Complete or Status of Add Advertisement Patterns Monitor or Remove Advertisement
    /// Monitor), which is then logged, recorded and, for a removal ``close(within:)`` awaits,
    /// handed to it. On the reader's queue.
    private static func answer(
        _ event: ManagementEvent, shared: Shared, label: String, logger: Logger, send: @Sendable ([UInt8]) throws(Errno) -> Void
    ) -> Bool {
        let opcode: UInt16
        let status: UInt8
        let parameters: [UInt8]
        switch event.kind {
        case .commandComplete(let answered, let result, let returned): (opcode, status, parameters) = (answered, result, returned)
        case .commandStatus(let answered, let result): (opcode, status, parameters) = (answered, result, [])
        default: return false
        }
        let handle = parameters.count >= 2 ? UInt16(parameters[0]) | UInt16(parameters[1]) << 8 : nil
        let controller = event.controller
        switch opcode {
        case ManagementCommand.addAdvertisementPatternsMonitor:
            guard status == 0, let handle else {
                let closed = shared.monitor.withLock { state -> CheckedContinuation<Removal, Never>? in
                    state.addsPending = max(0, state.addsPending - 1)
                    return state.closing && state.addsPending == 0 && state.removing == nil ? state.finish() : nil
                }
                closed?.resume(returning: .noMonitor)
                logger.warning(
                    "the kernel refused the advertisement monitor on \(label) (status 0x\(String(status, radix: 16))): "
                        + "the controller's duplicate filter may hide repeated advertisements")
                return true
            }
            // The previous monitor (a narrower one) goes once this one is in place; while closing,
            // this one goes at once.
            let (old, closing) = shared.monitor.withLock { state -> (UInt16?, Bool) in
                state.addsPending = max(0, state.addsPending - 1)
                if state.closing {
                    if state.removing == nil { state.removing = handle }
                    return (state.handle, true)
                }
                defer { state.handle = handle }
                return (state.handle, false)
            }
            logger.info("kernel advertisement monitor \(handle) added on \(label): the controller's duplicate filter is off")
            for retired in [old, closing ? handle : nil].compactMap({ $0 }) {
                do {
                    try send(ManagementCommand.removeMonitor(controller: controller, handle: retired))
                    if !closing { logger.info("kernel advertisement monitor \(handle) replaces \(retired) on \(label)") }
                } catch {
                    logger.warning("cannot remove kernel advertisement monitor \(retired) on \(label): \(error)")
                }
            }
            return true
        case ManagementCommand.removeAdvertisementMonitor:
            let waiter = shared.monitor.withLock { state -> (UInt16, CheckedContinuation<Removal, Never>)? in
                guard let removing = state.removing, handle == nil || handle == removing, let waiter = state.finish() else { return nil }
                return (removing, waiter)
            }
            if let (removing, waiter) = waiter {
                waiter.resume(returning: .answered(handle: removing, status: status))
            } else if status == 0 {
                logger.info("kernel advertisement monitor \(handle.map(String.init) ?? "?") removed on \(label)")
            } else {
                logger.warning(
                    "the kernel did not remove advertisement monitor \(handle.map(String.init) ?? "?") on \(label) "
                        + "(status 0x\(String(status, radix: 16)))")
            }
            return true
        default:
            return false
        }
    }

    /// Removes the kernel monitor while the socket is still read, waits for the kernel's answer
    /// (at most `timeout`), then stops reading and closes the socket; returns how the removal
    /// ended, which is also logged. Reports read meanwhile are dropped (their consumer is
    /// stopping). A monitor whose Add was not answered yet is removed when its answer comes,
    /// within the same time. Call once; ``close()`` afterwards does nothing.
    ///
    /// The removal is written from the reader's queue, between two reads. A write that fails
    /// with ENOMEM means the kernel refused the command at once and could not queue that
    /// status to us (net/bluetooth/mgmt_util.c, mgmt_cmd_status: sock_queue_rcv_skb finds the
    /// receive queue at its limit; hci_sock.c, hci_mgmt_cmd returns that error to write): the
    /// socket is then read empty and the command sent once more, so that its answer has room.
    @discardableResult
    func close(within timeout: Duration) async -> Removal {
        let removal = await withCheckedContinuation { (continuation: CheckedContinuation<Removal, Never>) in
            let action = shared.monitor.withLock { state -> UInt16?? in
                state.closing = true
                if let handle = state.handle {
                    state.handle = nil
                    state.removing = handle
                    state.waiter = continuation
                    return .some(handle)
                }
                if state.addsPending > 0 {
                    state.waiter = continuation
                    return .some(nil)
                }
                return nil
            }
            guard let action else { return continuation.resume(returning: .noMonitor) }
            let (seconds, attoseconds) = timeout.components
            // Not on the reader's queue, which a flood of reports may keep busy.
            DispatchQueue.global().asyncAfter(
                deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
            ) { [shared] in
                let waiting = shared.monitor.withLock { state in (state.finish(), state.removing) }
                waiting.0?.resume(returning: .timedOut(handle: waiting.1))
            }
            guard let handle = action else { return }
            queue.async { [self] in sendRemoval(handle, again: true) }
        }
        switch removal {
        case .noMonitor:
            break
        case .answered(let handle, 0):
            logger.info("kernel advertisement monitor \(handle) removed on hci\(controller)")
        case .answered(let handle, let status):
            logger.warning(
                "the kernel did not remove advertisement monitor \(handle) on hci\(controller) (status 0x\(String(status, radix: 16))): "
                    + "it stays until bluetoothd or the adapter restarts")
        case .notSent(let handle, let errno):
            logger.warning(
                "cannot remove kernel advertisement monitor \(handle) on hci\(controller) (\(errno), also after reading the socket empty): "
                    + "it stays until bluetoothd or the adapter restarts")
        case .timedOut(let handle):
            logger.warning(
                "no answer within \(timeout) to the removal of kernel advertisement monitor \(handle.map(String.init) ?? "(not yet added)") "
                    + "on hci\(controller): it may stay until bluetoothd or the adapter restarts")
        }
        let dropped = shared.droppedAtClose.load(ordering: .relaxed)
        if dropped > 0 { logger.debug("\(dropped) report(s) read on hci\(controller) while closing, not handed on") }
        reader.close()
        return removal
    }

    /// Writes Remove Advertisement Monitor `handle` on the reader's queue; on ENOMEM (see
    /// ``close(within:)``), reads the socket empty and, when `again`, writes it once more.
    private func sendRemoval(_ handle: UInt16, again: Bool) {
        do {
            try descriptor.writeAll(ManagementCommand.removeMonitor(controller: controller, handle: handle))
        } catch {
            if again, error == .outOfMemory {
                logger.info(
                    "removing kernel advertisement monitor \(handle) on hci\(controller): the kernel could not queue its answer "
                        + "(ENOMEM: our receive queue was full); reading the socket empty and sending it again")
                reader.afterDraining { [self] in sendRemoval(handle, again: false) }
                return
            }
            let waiter = shared.monitor.withLock { state in state.removing == handle ? state.finish() : nil }
            waiter?.resume(returning: .notSent(handle: handle, error))
        }
    }

    /// Stops reading and closes the socket at once, without removing the kernel monitor (for a
    /// socket that failed: nothing can be sent on it). Idempotent, from any thread.
    func close() {
        shared.monitor.withLock { $0.closing = true }
        reader.close()
    }
}

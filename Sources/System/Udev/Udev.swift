import CUdev
import Dispatch
import LinuxSystem
import AsyncPrimitives

/// Reads udev's device database: enumeration (udev_enumerate(3)).
public enum Udev {
    /// Every device of `subsystem` (for example `tty`) with its properties, sorted by syspath.
    /// libudev reads sysfs and /run/udev/data synchronously, so this runs on a queue of its own
    /// while the caller suspends.
    public static func devices(subsystem: String) async throws(UdevError) -> [UdevDevice] {
        try await QueueExecutor(label: "healthgate.udev-enumerate").run { () throws(UdevError) in
            try enumerate(subsystem: subsystem)
        }
    }

    /// The blocking enumeration behind ``devices(subsystem:)``; runs on the caller's thread.
    static func enumerate(subsystem: String) throws(UdevError) -> [UdevDevice] {
        guard let udev = udev_new() else { throw UdevError("udev_new", errno: Errno.lastError.rawValue) }
        defer { udev_unref(udev) }
        guard let enumerate = udev_enumerate_new(udev) else { throw UdevError("udev_enumerate_new", errno: Errno.lastError.rawValue) }
        defer { udev_enumerate_unref(enumerate) }
        var result = udev_enumerate_add_match_subsystem(enumerate, subsystem)
        if result < 0 { throw UdevError("udev_enumerate_add_match_subsystem", errno: -result) }
        result = udev_enumerate_scan_devices(enumerate)
        if result < 0 { throw UdevError("udev_enumerate_scan_devices", errno: -result) }
        var devices: [UdevDevice] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            if let path = udev_list_entry_get_name(current),
                let device = udev_device_new_from_syspath(udev, path)
            {
                devices.append(copy(device))
                udev_device_unref(device)
            }
            entry = udev_list_entry_get_next(current)
        }
        return devices.sorted { $0.syspath < $1.syspath }
    }

    static func copy(_ device: OpaquePointer) -> UdevDevice {
        func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        var properties: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(device)
        while let current = entry {
            if let name = string(udev_list_entry_get_name(current)) {
                properties[name] = string(udev_list_entry_get_value(current)) ?? ""
            }
            entry = udev_list_entry_get_next(current)
        }
        var links: [String] = []
        entry = udev_device_get_devlinks_list_entry(device)
        while let current = entry {
            if let name = string(udev_list_entry_get_name(current)) { links.append(name) }
            entry = udev_list_entry_get_next(current)
        }
        return UdevDevice(
            syspath: string(udev_device_get_syspath(device)) ?? "",
            sysname: string(udev_device_get_sysname(device)) ?? "",
            subsystem: string(udev_device_get_subsystem(device)),
            devnode: string(udev_device_get_devnode(device)),
            devlinks: links.sorted(), properties: properties)
    }
}

/// Hotplug events for one subsystem from udevd's netlink multicast group, delivered as an
/// `AsyncStream`.
///
/// The monitor socket is non-blocking and read by a DispatchSource on a private serial queue
/// (`udev_monitor_get_fd`, then `udev_monitor_receive_device` until it returns NULL), so nothing
/// blocks the cooperative pool. Only events udevd has processed (rules applied, properties
/// set) arrive: the "udev" group, not the raw "kernel" one. Buffer: at most 256 undelivered
/// events, oldest dropped first (a consumer that far behind re-enumerates anyway).
public final class UdevMonitor: Sendable {
    /// The events, until ``stop()``.
    public let events: AsyncStream<UdevEvent>
    private let continuation: AsyncStream<UdevEvent>.Continuation
    private let readiness: ReadinessSource

    /// Starts listening for events of `subsystem` (e.g. `tty`).
    public init(subsystem: String) throws(UdevError) {
        guard let udev = udev_new() else { throw UdevError("udev_new", errno: Errno.lastError.rawValue) }
        guard let rawMonitor = udev_monitor_new_from_netlink(udev, "udev") else {
            let error = Errno.lastError.rawValue
            udev_unref(udev)
            throw UdevError("udev_monitor_new_from_netlink", errno: error)
        }
        var failure: UdevError?
        var result = udev_monitor_filter_add_match_subsystem_devtype(rawMonitor, subsystem, nil)
        if result < 0 { failure = UdevError("udev_monitor_filter_add_match_subsystem_devtype", errno: -result) }
        if failure == nil {
            result = udev_monitor_enable_receiving(rawMonitor)
            if result < 0 { failure = UdevError("udev_monitor_enable_receiving", errno: -result) }
        }
        let fd = failure == nil ? udev_monitor_get_fd(rawMonitor) : -1
        if failure == nil, fd < 0 { failure = UdevError("udev_monitor_get_fd", errno: -fd) }
        if let failure {
            udev_monitor_unref(rawMonitor)
            udev_unref(udev)
            throw failure
        }
        // From here on the handles own both references.
        let monitor = UdevMonitorHandles(.init(udev: udev, monitor: rawMonitor))
        (events, continuation) = AsyncStream.makeStream(of: UdevEvent.self, bufferingPolicy: .bufferingNewest(256))
        let continuation = self.continuation
        // The monitor owns the socket: it is released (and the context with it) only once the
        // source is cancelled, as dispatch requires.
        // A failure drops the closures, and with them the last references to the handles.
        do {
            readiness = try ReadinessSource(
                descriptor: fd, queue: DispatchQueue(label: "healthgate.udev-monitor"),
            onCancel: { _ = monitor },
            onReady: {
                monitor.withMonitor { monitor in
                    while let device = udev_monitor_receive_device(monitor) {
                        let action = udev_device_get_action(device).map { String(cString: $0) } ?? "change"
                        continuation.yield(UdevEvent(action: .init(action), device: Udev.copy(device)))
                        udev_device_unref(device)
                    }
                }
            })
        } catch {
            continuation.finish()
            throw UdevError("watching the udev monitor's socket", errno: error.rawValue)
        }
        continuation.onTermination = { [readiness] _ in readiness.cancel() }
    }

    /// Stops listening and ends ``events``. Idempotent.
    public func stop() {
        readiness.cancel()
        continuation.finish()
    }
}

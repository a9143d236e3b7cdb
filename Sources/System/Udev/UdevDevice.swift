/// A device as udev describes it: sysfs identity, device node and properties (udev(7)).
///
/// A value type copied out of libudev, so it is safe to keep and to send anywhere.
public struct UdevDevice: Hashable, Sendable {
    /// The sysfs path, `/sys/devices/…/tty/ttyACM0`: stable while the device is plugged in.
    public var syspath: String
    /// The kernel name, `ttyACM0`.
    public var sysname: String
    public var subsystem: String?
    /// The device node, `/dev/ttyACM0`, if it has one.
    public var devnode: String?
    /// Symlinks to the node (`/dev/serial/by-id/…`, our `/dev/healthgate/…`).
    public var devlinks: [String]
    /// Every udev property (`ID_SERIAL`, `ID_VENDOR_ID`, `HEALTHGATE_ADAPTER`, …).
    public var properties: [String: String]
    /// Whether the kernel device is virtual (`/sys/devices/virtual/…`: consoles, ptmx), not
    /// backed by hardware or a driver such as cdc_acm, ftdi_sio or rfcomm.
    public var isVirtual: Bool { syspath.contains("/devices/virtual/") }

    public init(
        syspath: String, sysname: String, subsystem: String? = nil, devnode: String? = nil,
        devlinks: [String] = [], properties: [String: String] = [:]
    ) {
        self.syspath = syspath
        self.sysname = sysname
        self.subsystem = subsystem
        self.devnode = devnode
        self.devlinks = devlinks
        self.properties = properties
    }

    /// `ID_SERIAL`: vendor, model and serial number joined, as the usb_id builtin makes it.
    public var serial: String? { properties["ID_SERIAL"] }
    /// `ID_SERIAL_SHORT`: the USB iSerialNumber string.
    public var serialShort: String? { properties["ID_SERIAL_SHORT"] }
    /// `ID_VENDOR_ID`, four hex digits.
    public var vendorID: String? { properties["ID_VENDOR_ID"] }
    /// `ID_MODEL_ID`, four hex digits.
    public var modelID: String? { properties["ID_MODEL_ID"] }
    /// `ID_VENDOR` (or its encoded form's decoding, as udev gives it).
    public var vendor: String? { properties["ID_VENDOR_FROM_DATABASE"] ?? properties["ID_VENDOR"] }
    /// `ID_MODEL`.
    public var model: String? { properties["ID_MODEL_FROM_DATABASE"] ?? properties["ID_MODEL"] }
    /// `HEALTHGATE_ADAPTER`, set by our rules: which healthgate plugin should use the device.
    public var healthgateAdapter: String? { properties["HEALTHGATE_ADAPTER"] }
    /// `HEALTHGATE_DECODER`, set by our rules: the pedometer protocol the device speaks.
    public var healthgateDecoder: String? { properties["HEALTHGATE_DECODER"] }
    /// `vvvv:pppp` when both IDs are known.
    public var usbID: String? {
        guard let vendorID, let modelID else { return nil }
        return "\(vendorID):\(modelID)"
    }
}

/// A hotplug event from the udev monitor.
public struct UdevEvent: Hashable, Sendable {
    /// The uevent action.
    public enum Action: Hashable, Sendable {
        case add, remove, change, bind, unbind, move
        case other(String)

        init(_ text: String) {
            switch text {
            case "add": self = .add
            case "remove": self = .remove
            case "change": self = .change
            case "bind": self = .bind
            case "unbind": self = .unbind
            case "move": self = .move
            default: self = .other(text)
            }
        }
    }

    public var action: Action
    public var device: UdevDevice

    public init(action: Action, device: UdevDevice) {
        self.action = action
        self.device = device
    }
}

/// A libudev failure, with the call that failed.
public struct UdevError: Error, Hashable, Sendable, CustomStringConvertible {
    public var operation: String
    /// The errno libudev left, when it set one.
    public var errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "udev \(operation) failed (errno \(errno))" }
}

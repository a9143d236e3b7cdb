/// bluetoothd's version, as its adapters announce it, and what it means for notifications.
///
/// bluetoothd gives each adapter the Device ID of its `main.conf` (`DeviceID`), by default the
/// Linux Foundation's vendor id 0x1D6B, BlueZ's product id 0x0246 and its own version as
/// `major << 8 | minor`; the adapter's `Modalias` property reads `usb:v1D6Bp0246d0542` for 5.66.
/// Another Device ID says nothing about the version.
///
/// Why it matters: before 5.84 (commit 476ae809a, "gatt-client: avoid UAF after acquire notify
/// failure"), an AcquireNotify whose subscription fails, because the link drops during the call or
/// the device refuses the descriptor write, leaves its state behind: the call never answers, every
/// later AcquireNotify and StartNotify on that characteristic fails with
/// `org.bluez.Error.NotPermitted: Notify acquired` until bluetoothd restarts, and removing the device
/// frees it twice and crashes bluetoothd. The device lab's bonded glucose meter (Debian's 5.66) met
/// exactly that after a reconnect. So AcquireNotify is used only where bluetoothd is known to be
/// 5.84 or later; everywhere else notifications go through StartNotify.
struct BlueZVersion: CustomStringConvertible, Sendable {
    /// Major and minor version; nil when the adapter's Device ID is not BlueZ's own.
    let version: (major: Int, minor: Int)?

    /// The first version whose failed AcquireNotify cleans up after itself.
    static let acquireNotifyFixed = (major: 5, minor: 84)

    init(modalias: String?) {
        version = modalias.flatMap(Self.parse)
    }

    /// `usb:v1D6Bp0246d` and four hex digits, `major << 8 | minor` → (major, minor); nil for
    /// anything else.
    static func parse(_ modalias: String) -> (major: Int, minor: Int)? {
        let prefix = "usb:v1D6Bp0246d"
        guard modalias.uppercased().hasPrefix(prefix.uppercased()) else { return nil }
        let digits = modalias.dropFirst(prefix.count)
        guard digits.count == 4, let value = Int(digits, radix: 16) else { return nil }
        return (value >> 8, value & 0xFF)
    }

    /// Whether a failed AcquireNotify leaves bluetoothd as it was (5.84 and later).
    var acquireNotifyIsSafe: Bool {
        guard let version else { return false }
        return (version.major, version.minor) >= Self.acquireNotifyFixed
    }

    var description: String {
        guard let version else { return "bluetoothd's version is unknown (its Device ID is not BlueZ's own)" }
        let verdict = acquireNotifyIsSafe ? "handles a failed AcquireNotify" : "leaves a failed AcquireNotify behind (fixed in 5.84)"
        return "BlueZ \(version.major).\(version.minor) \(verdict)"
    }
}

/// A device identity as a person writes it (`participant assign`, a participant's or a workout's
/// `devices`) and as a sample's ``Device`` carries it, in one canonical form, so that two ways of
/// writing the same strap compare equal.
///
/// Recognised forms:
/// - a **Bluetooth address**: six hex octets in any case, separated by `:`, `-` or nothing
///   (`02:00:00:00:00:01`, `02-00-00-00-00-01`, `020000000001`); canonical: upper case with `:`.
/// - an **ANT+ device**: `ant:TYPE:NUMBER` (device type, device number), in any case, numbers in
///   decimal with or without leading zeros; canonical: `ant:120:123456`.
/// - a **Polar device id**: the eight hex digits a Polar strap prints on its back and puts last
///   in its Bluetooth name ("Polar H10 1A2B3C4D"), in any case; canonical: upper case
///   (`1A2B3C4D`). Its broadcasts and its connection both carry it (``polarDeviceID(inName:)``).
/// Anything else (a serial number, a `manufacturer/serial`, a name) is its own canonical form,
/// compared exactly. New forms are added here, in one place.
public struct DeviceIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The canonical form.
    public let canonical: String

    /// Whether it is an ANT+ device (`ant:TYPE:NUMBER`).
    public let isANTDevice: Bool

    /// The identity `text` names (never fails: an unrecognised text is itself).
    public init(_ text: String) {
        if let address = Self.bluetoothAddress(text) {
            (canonical, isANTDevice) = (address, false)
        } else if let ant = Self.antDevice(text) {
            (canonical, isANTDevice) = (ant, true)
        } else {
            (canonical, isANTDevice) = (Self.polarDeviceID(text) ?? text, false)
        }
    }

    /// The Polar device id in a Bluetooth name, as Polar's SDK reads it
    /// (`BleAdvertisementContent.processName`): the last of at least three words of a name
    /// starting with "Polar", when it is eight hex digits ("Polar H10 1A2B3C4D" → `1A2B3C4D`);
    /// nil for any other name.
    public static func polarDeviceID(inName name: String) -> DeviceIdentity? {
        let words = name.split(separator: " ")
        guard words.count >= 3, words[0] == "Polar", let id = words.last, polarDeviceID(String(id)) != nil else { return nil }
        return DeviceIdentity(String(id))
    }

    /// The canonical form.
    public var description: String { canonical }

    /// `text` as a canonical Bluetooth address, or nil when it is not one.
    static func bluetoothAddress(_ text: String) -> String? {
        let hex = Array(text.utf8).filter { $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "-") }
        let separators = text.utf8.count - hex.count
        // Either no separators, or exactly five between the six octets.
        guard hex.count == 12, separators == 0 || separators == 5,
              hex.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20) })
        else { return nil }
        if separators == 5 {
            let parts = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "-" })
            guard parts.count == 6, parts.allSatisfy({ $0.count == 2 }) else { return nil }
        }
        let upper = String(decoding: hex, as: UTF8.self).uppercased()
        var octets: [Substring] = []
        var index = upper.startIndex
        while index < upper.endIndex {
            let next = upper.index(index, offsetBy: 2)
            octets.append(upper[index..<next])
            index = next
        }
        return octets.joined(separator: ":")
    }

    /// `text` as a canonical Polar device id (eight hex digits, upper case), or nil.
    static func polarDeviceID(_ text: String) -> String? {
        guard text.utf8.count == 8, text.allSatisfy(\.isHexDigit) else { return nil }
        return text.uppercased()
    }

    /// `text` as a canonical ANT+ identity, or nil when it is not one.
    static func antDevice(_ text: String) -> String? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].lowercased() == "ant", let type = UInt8(parts[1]), let number = UInt32(parts[2]),
              number < 1 << 20
        else { return nil }
        return "ant:\(type):\(number)"
    }
}

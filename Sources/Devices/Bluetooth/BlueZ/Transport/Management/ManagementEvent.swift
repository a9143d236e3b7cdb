/// One event read from the kernel's management socket (BlueZ `doc/mgmt-api.txt`, "Packet
/// Structures"): a 6-byte header, then the event's parameters.
///
/// Header (little-endian u16s, include/net/bluetooth/mgmt.h `struct mgmt_hdr`): event code,
/// controller index (0xFFFF: none), parameter length. One event per datagram. Only the events the
/// advertisement path reads are decoded; the others are ``Kind/other(code:)``.
struct ManagementEvent: Sendable, Hashable {
    /// What the event says.
    enum Kind: Sendable, Hashable {
        /// Device Found (0x0012): an advertising report (and its scan response) while discovery runs.
        case deviceFound(ManagementDeviceFound)
        /// Advertisement Monitor Device Found (0x002F): a report matching a monitor, with its handle.
        case monitorDeviceFound(monitor: UInt16, ManagementDeviceFound)
        /// Command Complete (0x0001): the answer to a command this socket sent, with its
        /// opcode, status (0 success) and return parameters.
        case commandComplete(opcode: UInt16, status: UInt8, parameters: [UInt8])
        /// Command Status (0x0002): a command this socket sent failed or is pending.
        case commandStatus(opcode: UInt16, status: UInt8)
        /// Any other event, not decoded.
        case other(code: UInt16)
    }

    /// Command Complete (mgmt-api.txt, "Command Complete Event").
    static let commandCompleteCode: UInt16 = 0x0001
    /// Command Status (mgmt-api.txt, "Command Status Event").
    static let commandStatusCode: UInt16 = 0x0002

    /// Device Found (mgmt-api.txt, "Device Found Event").
    static let deviceFoundCode: UInt16 = 0x0012
    /// Advertisement Monitor Device Found (mgmt-api.txt, "Advertisement Monitor Device Found Event").
    static let monitorDeviceFoundCode: UInt16 = 0x002F
    /// The header's size: code, index, length.
    static let headerLength = 6

    /// The controller the event concerns (hci0 is 0), 0xFFFF for none.
    let controller: UInt16
    /// The event.
    let kind: Kind

    /// Decodes one datagram. Pure: no I/O.
    /// - Throws: ``ManagementEventError`` when the header or a Device Found's fixed fields are
    ///   cut short, or the header's length disagrees with the datagram's (the kernel sends
    ///   exactly one event per datagram, so a mismatch is a truncated read, never more events).
    static func decode(_ bytes: [UInt8]) throws(ManagementEventError) -> ManagementEvent {
        var reader = LittleEndianBytes(bytes[...])
        guard let code = reader.u16(), let controller = reader.u16(), let length = reader.u16() else {
            throw ManagementEventError(.truncatedHeader, "\(bytes.count) bytes, a header is \(headerLength)")
        }
        guard Int(length) == reader.remaining else {
            throw ManagementEventError(
                .lengthMismatch, "event 0x\(String(code, radix: 16)) announces \(length) parameter bytes, carries \(reader.remaining)")
        }
        switch code {
        case deviceFoundCode:
            return ManagementEvent(controller: controller, kind: .deviceFound(try ManagementDeviceFound(&reader, event: code)))
        case monitorDeviceFoundCode:
            guard let monitor = reader.u16() else {
                throw ManagementEventError(.truncatedEvent, "event 0x2f: no monitor handle")
            }
            return ManagementEvent(
                controller: controller, kind: .monitorDeviceFound(monitor: monitor, try ManagementDeviceFound(&reader, event: code)))
        case commandCompleteCode, commandStatusCode:
            guard let opcode = reader.u16(), let status = reader.u8() else {
                throw ManagementEventError(.truncatedEvent, "event 0x\(String(code, radix: 16)): no opcode and status")
            }
            if code == commandStatusCode {
                return ManagementEvent(controller: controller, kind: .commandStatus(opcode: opcode, status: status))
            }
            let parameters = Array(reader.bytes(reader.remaining) ?? [])
            return ManagementEvent(controller: controller, kind: .commandComplete(opcode: opcode, status: status, parameters: parameters))
        default:
            return ManagementEvent(controller: controller, kind: .other(code: code))
        }
    }
}

/// The parameters Device Found and Advertisement Monitor Device Found share (mgmt-api.txt):
/// Address (6), Address_Type (1), RSSI (1), Flags (4), EIR_Data_Length (2), EIR_Data.
struct ManagementDeviceFound: Sendable, Hashable {
    /// The address type (mgmt-api.txt, "Address_Type").
    enum AddressType: Sendable, Hashable {
        /// 0: BR/EDR.
        case bredr
        /// 1: LE public.
        case lePublic
        /// 2: LE random.
        case leRandom
        /// Any other value.
        case other(UInt8)

        init(_ value: UInt8) {
            switch value {
            case 0: self = .bredr
            case 1: self = .lePublic
            case 2: self = .leRandom
            default: self = .other(value)
            }
        }
    }

    /// `AA:BB:CC:DD:EE:FF` (the event carries it least significant byte first).
    let address: String
    /// Public or random (LE), or BR/EDR.
    let addressType: AddressType
    /// dBm; nil when the controller gave none (127, mgmt-api.txt: "RSSI not available").
    let rssi: Int?
    /// The event's flags (mgmt-api.txt: 0x01 confirm name, 0x02 legacy pairing, 0x04 not
    /// connectable, …), as sent.
    let flags: UInt32
    /// The EIR / advertising data (with the scan response appended, when the kernel merged one).
    let data: [UInt8]

    /// Reads the shared parameters of event `event` from `reader`, which must hold exactly them.
    init(_ reader: inout LittleEndianBytes, event: UInt16) throws(ManagementEventError) {
        let name = "event 0x\(String(event, radix: 16))"
        guard let addressBytes = reader.bytes(6), let type = reader.u8(), let rssi = reader.u8(), let flags = reader.u32(),
            let length = reader.u16()
        else {
            throw ManagementEventError(.truncatedEvent, "\(name): the fixed fields (14 bytes) are cut short")
        }
        guard let data = reader.bytes(Int(length)), reader.remaining == 0 else {
            throw ManagementEventError(.truncatedEvent, "\(name): EIR_Data_Length \(length), \(reader.remaining) bytes left")
        }
        address = addressBytes.reversed().map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
        addressType = AddressType(type)
        self.rssi = rssi == 127 ? nil : Int(Int8(bitPattern: rssi))
        self.flags = flags
        self.data = Array(data)
    }
}

/// A management event that cannot be decoded.
struct ManagementEventError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    enum Code: Sendable, Hashable {
        /// Fewer than the header's 6 bytes.
        case truncatedHeader
        /// The header's parameter length is not what the datagram carries.
        case lengthMismatch
        /// An event's fixed fields or its data are cut short.
        case truncatedEvent
        /// An advertising data structure runs past the data's end.
        case truncatedStructure
    }

    /// What was wrong.
    let code: Code
    /// The detail, with the figures.
    let detail: String

    init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    var description: String { "management event: \(detail)" }
}

/// A cursor over little-endian bytes that returns nil instead of reading past the end.
struct LittleEndianBytes {
    private var rest: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        rest = bytes
    }

    /// How many bytes are left.
    var remaining: Int { rest.count }

    mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, rest.count >= count else { return nil }
        defer { rest = rest.dropFirst(count) }
        return rest.prefix(count)
    }

    mutating func u8() -> UInt8? { bytes(1)?.first }

    mutating func u16() -> UInt16? {
        guard let b = bytes(2) else { return nil }
        return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
    }

    mutating func u32() -> UInt32? {
        guard let b = bytes(4) else { return nil }
        return b.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

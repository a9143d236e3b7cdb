/// One message of the ANT serial protocol as it travels on the wire:
/// `SYNC (0xA4) | LENGTH | MESSAGE ID | PAYLOAD[LENGTH] | CHECKSUM`, the checksum being the XOR
/// of every byte before it, sync byte included ("ANT Message Protocol and Usage", §7.1).
///
/// A value: no I/O. ``ANTMessage`` gives the payload its meaning.
public struct ANTFrame: Hashable, Sendable, CustomStringConvertible {
    /// The byte that starts every frame.
    public static let sync: UInt8 = 0xA4
    /// The longest payload the framer accepts. The messages of a scan session are short (an
    /// extended broadcast with channel id, RSSI and timestamp is 19 bytes); anything longer is
    /// noise, and a smaller bound shortens the wait after a false sync byte.
    public static let maximumPayloadLength = 32

    /// The message id (``ANTMessageID`` names the known ones).
    public var id: UInt8
    /// The payload, at most ``maximumPayloadLength`` bytes.
    public var payload: [UInt8]

    /// A frame; a payload longer than ``maximumPayloadLength`` is cut to it.
    public init(id: UInt8, payload: [UInt8]) {
        self.id = id
        self.payload = Array(payload.prefix(Self.maximumPayloadLength))
    }

    /// The frame's bytes on the wire, checksum included.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = [Self.sync, UInt8(payload.count), id]
        bytes.append(contentsOf: payload)
        bytes.append(Self.checksum(bytes))
        return bytes
    }

    /// The XOR of `bytes`: the checksum of a frame's bytes before the checksum.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 {
        bytes.reduce(0, ^)
    }

    /// The id and the payload in hex, except a set-network-key frame's, whose payload (the
    /// key) is never shown.
    public var description: String {
        let name = ANTMessageID(rawValue: id).map(\.commandName) ?? ANTMessageID.name(of: id)
        guard id != ANTMessageID.setNetworkKey.rawValue else { return "\(name) [\(payload.count) bytes]" }
        let hex = payload.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "\(name) [\(hex.joined(separator: " "))]"
    }
}

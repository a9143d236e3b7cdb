/// A channel id: the device number, device type and transmission type that name an ANT master
/// (a strap). Sent by the host to pair a channel (message 0x51), and by the stick with each
/// extended broadcast (flag 0x80) and when asked for a paired channel's id.
///
/// The device number is 20 bits wide: the 16-bit number plus the upper nibble of the
/// transmission type ("ANT Message Protocol and Usage", §5.2.3.3, extended device number).
public struct ANTChannelID: Hashable, Sendable {
    /// The 16-bit device number (0 = wildcard when pairing).
    public var deviceNumber: UInt16
    /// The device type byte: the type in bits 0–6, the pairing request in bit 7.
    public var deviceTypeByte: UInt8
    /// The transmission type byte (0 = wildcard when pairing); its upper nibble extends the
    /// device number.
    public var transmissionType: UInt8

    /// A channel id from its fields.
    public init(deviceNumber: UInt16, deviceTypeByte: UInt8, transmissionType: UInt8) {
        self.deviceNumber = deviceNumber
        self.deviceTypeByte = deviceTypeByte
        self.transmissionType = transmissionType
    }

    /// The id that matches any device: number, type and transmission type all 0.
    public static let wildcard = ANTChannelID(deviceNumber: 0, deviceTypeByte: 0, transmissionType: 0)

    /// The channel id of the device `identifier`: its 20-bit number split into the 16-bit number
    /// and the transmission type's upper nibble (whose lower nibble is `transmissionTypeLow`).
    public init(_ identifier: ANTDeviceIdentifier, transmissionTypeLow: UInt8 = 0x01) {
        deviceNumber = UInt16(truncatingIfNeeded: identifier.deviceNumber)
        deviceTypeByte = identifier.deviceType & 0x7F
        transmissionType = UInt8(truncatingIfNeeded: (identifier.deviceNumber >> 16) << 4) | (transmissionTypeLow & 0x0F)
    }

    /// The device type without the pairing bit (120 for a heart-rate monitor).
    public var deviceType: UInt8 { deviceTypeByte & 0x7F }

    /// The 20-bit device number: the transmission type's upper nibble above the 16-bit number.
    public var extendedDeviceNumber: UInt32 {
        UInt32(transmissionType >> 4) << 16 | UInt32(deviceNumber)
    }

    /// The device this id names.
    public var device: ANTDeviceIdentifier {
        ANTDeviceIdentifier(deviceType: deviceType, deviceNumber: extendedDeviceNumber)
    }

    /// The id's four bytes on the wire: number (little-endian), type, transmission type.
    public var bytes: [UInt8] {
        [UInt8(deviceNumber & 0xFF), UInt8(deviceNumber >> 8), deviceTypeByte, transmissionType]
    }

    /// An id from its four bytes on the wire (`bytes` must hold at least four).
    init(wire bytes: ArraySlice<UInt8>) {
        let start = bytes.startIndex
        deviceNumber = UInt16(bytes[start]) | UInt16(bytes[start + 1]) << 8
        deviceTypeByte = bytes[start + 2]
        transmissionType = bytes[start + 3]
    }
}

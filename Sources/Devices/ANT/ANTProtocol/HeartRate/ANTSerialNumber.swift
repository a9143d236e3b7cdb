/// An ANT+ device's 32-bit serial number, which no single message carries whole: page 2
/// (Manufacturer Information) sends "the upper 16 bits of a 32 bit serial number" (the field as
/// the ANT+ Heart Rate Monitor profile and the ANT+ Android plugin's ManufacturerAndSerial name
/// it; trainerday/react-native-ant-plus's README quotes the plugin), and the lower 16 bits are
/// the 16-bit device number of the channel id, the part of the serial that ANT searches by
/// (yellowcog.com, "Understanding ANT+ serial numbers").
///
/// A strap that extends its device number to 20 bits puts the upper nibble of its transmission
/// type above the 16-bit number (thisisant.com Tech FAQ, "What is the extended device number?";
/// "ANT Message Protocol and Usage" §5.2.3.3). Those four bits extend the number with bits 16–19
/// of the serial (the same yellowcog.com page: the 20-bit number is the serial's lower 20 bits),
/// which page 2 already carries: the serial takes only the 16-bit device number from the channel
/// id, never the nibble a second time. Printed in decimal, as ANT+ displays show a sensor's
/// serial and as ``ANTDeviceIdentifier`` prints the device number: a strap whose serial is below
/// 2^20 prints the same number for both.
public struct ANTSerialNumber: Hashable, Sendable, CustomStringConvertible {
    /// The 32-bit serial number.
    public var value: UInt32

    /// A serial number from its 32 bits.
    public init(value: UInt32) {
        self.value = value
    }

    /// The serial number of `device` whose page 2 sent `upperBits`; nil for 0xFFFF, which an
    /// ANT+ field of all ones means: not given (Common Data Page 81 sets an undefined serial
    /// number to 0xFFFFFFFF).
    public init?(upperBits: UInt16, of device: ANTDeviceIdentifier) {
        guard upperBits != 0xFFFF else { return nil }
        value = UInt32(upperBits) << 16 | (device.deviceNumber & 0xFFFF)
    }

    /// Page 2's field: the upper 16 bits.
    public var upperBits: UInt16 { UInt16(truncatingIfNeeded: value >> 16) }

    /// The serial in decimal (`3472883`).
    public var description: String { String(value) }
}

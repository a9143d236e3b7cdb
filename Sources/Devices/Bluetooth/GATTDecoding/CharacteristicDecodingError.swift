/// A characteristic value that does not decode, with the field, its byte offset, and how many
/// bytes the field needed against how many the payload still had.
///
/// Generic over the plugin's enumeration of the characteristics it decodes, so that each plugin
/// names its own while the shape, the codes and the messages exist once. A struct with a nested
/// code (not an enum) so that codes can be added without breaking users.
public struct CharacteristicDecodingError<Characteristic: DecodedCharacteristic>: Error, Hashable, Sendable,
    CustomStringConvertible {
    /// What is wrong.
    public enum Code: String, Hashable, Sendable {
        /// The payload ends inside a field the flags announce.
        case truncated
        /// A list field whose length is not a whole number of items (an RR-Interval list of odd
        /// length): its last item is cut.
        case oddLength
        /// A value outside the range the specification allows (Battery Level above 100).
        case valueOutOfRange
        /// A value the specification reserves for future use (Body Sensor Location 7–255, Sensor
        /// Location 17–255).
        case reservedValue
        /// A single-field characteristic with bytes after its value.
        case unexpectedLength
        /// A length field that disagrees with the bytes it counts (a Generic Health Sensor
        /// observation whose length matches neither what its fields take nor the payload).
        case lengthMismatch
        /// A class or type octet that names nothing the specification defines (a Generic Health
        /// Sensor observation class outside 0x01–0x08 and 0xFF).
        case unknownClass
        /// A value the specification defines but the decoder does not read (a Generic Health
        /// Sensor compound component that is not numeric, a bundle inside a bundle).
        case unsupportedValue
        /// A text field whose bytes are not valid UTF-8.
        case invalidUTF8
    }

    /// What is wrong.
    public var code: Code
    /// The characteristic whose value failed.
    public var characteristic: Characteristic
    /// The field, by its name in the JSON output (`heartRate`, `cumulativeWheelRevolutions`, `flags`, …).
    public var field: String
    /// The byte offset at which the field starts.
    public var offset: Int
    /// Bytes the field needs (for `.truncated`/`.oddLength`), else the expected length.
    public var needed: Int
    /// Bytes the payload had from `offset` on.
    public var available: Int
    /// The offending value, for `.valueOutOfRange`, `.reservedValue`, `.unknownClass` and
    /// `.unsupportedValue`; the declared length for `.lengthMismatch`.
    public var value: Int?

    /// Creates an error; see the properties for the meaning of each value.
    public init(
        _ code: Code, characteristic: Characteristic, field: String, offset: Int, needed: Int,
        available: Int, value: Int? = nil
    ) {
        self.code = code
        self.characteristic = characteristic
        self.field = field
        self.offset = offset
        self.needed = needed
        self.available = available
        self.value = value
    }

    /// One line naming the characteristic, the field, the offset and the byte counts.
    public var description: String {
        let prefix = "\(characteristic.displayName): "
        switch code {
        case .truncated:
            return prefix
                + "field \(field) at offset \(offset) is truncated: needs \(needed) byte\(needed == 1 ? "" : "s"), \(available) available"
        case .oddLength:
            return prefix
                + "field \(field) has an odd length: the interval at offset \(offset) needs \(needed) byte\(needed == 1 ? "" : "s"), \(available) available"
        case .valueOutOfRange:
            return prefix + "field \(field) at offset \(offset) is out of range: \(value ?? -1)"
        case .reservedValue:
            return prefix + "field \(field) at offset \(offset) has the reserved value \(value ?? -1)"
        case .unexpectedLength:
            return prefix + "expected \(needed) byte\(needed == 1 ? "" : "s"), got \(offset + available)"
        case .lengthMismatch:
            return prefix
                + "field \(field) at offset \(offset) declares \(value ?? -1), but the bytes it counts are \(needed)"
        case .unknownClass:
            return prefix + "field \(field) at offset \(offset) has the unknown value 0x\(String(value ?? -1, radix: 16, uppercase: true))"
        case .unsupportedValue:
            return prefix + "field \(field) at offset \(offset) has the value \(value ?? -1), which is not supported"
        case .invalidUTF8:
            return prefix + "field \(field) at offset \(offset) is not valid UTF-8 (\(needed) byte\(needed == 1 ? "" : "s"))"
        }
    }
}

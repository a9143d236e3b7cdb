/// A characteristic value that does not decode, with the field, its byte offset, and how many
/// bytes the field needed against how many the payload still had.
///
/// The same shape as the heart-rate plugin's `GATTDecodingError`; plugins never import one
/// another, so each has its own until the shape moves into a core module that both use.
/// A struct with a nested code (not an enum) so that codes can be added without breaking users.
public struct FitnessDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Code: String, Hashable, Sendable {
        /// The payload ends inside a field the flags announce.
        case truncated
        /// A value the specification reserves for future use (Sensor Location 17–255).
        case reservedValue
        /// A fixed-length characteristic with bytes after its value.
        case unexpectedLength
    }

    /// What is wrong.
    public var code: Code
    /// The characteristic whose value failed.
    public var characteristic: FitnessCharacteristic
    /// The field, by its name in the JSON output (`cumulativeWheelRevolutions`, `flags`, …).
    public var field: String
    /// The byte offset at which the field starts.
    public var offset: Int
    /// Bytes the field needs (for `.truncated`), else the expected length.
    public var needed: Int
    /// Bytes the payload had from `offset` on.
    public var available: Int
    /// The offending value, for `.reservedValue`.
    public var value: Int?

    /// Creates an error; see the properties for the meaning of each value.
    public init(
        _ code: Code, characteristic: FitnessCharacteristic, field: String, offset: Int, needed: Int,
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
                + "field \(field) at offset \(offset) is truncated: needs \(needed) byte(s), \(available) available"
        case .reservedValue:
            return prefix + "field \(field) at offset \(offset) has the reserved value \(value ?? -1)"
        case .unexpectedLength:
            return prefix + "expected \(needed) byte(s), got \(offset + available)"
        }
    }
}

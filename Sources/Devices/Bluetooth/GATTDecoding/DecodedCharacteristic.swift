/// A characteristic a plugin decodes: its name and assigned number for errors and logs.
public protocol DecodedCharacteristic: Hashable, Sendable {
    /// The name and assigned number from the GATT Specification Supplement, for example
    /// `Heart Rate Measurement (0x2A37)`.
    var displayName: String { get }
}

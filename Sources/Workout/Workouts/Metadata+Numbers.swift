package import HealthModel

extension Metadata {
    /// A numeric value as a Double, whether it was stored as an integer or a double. JSON does not
    /// keep the difference (`10.0` encodes as `10` and decodes as an integer), so a workout read
    /// back from a store must be read this way.
    package func number(_ key: MetadataKey) -> Double? {
        switch self[key] {
        case .double(let value)?: value
        case .integer(let value)?: Double(value)
        default: nil
        }
    }
}

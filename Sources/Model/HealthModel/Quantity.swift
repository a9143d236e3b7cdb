/// A value with a unit, like HealthKit's HKQuantity.
public struct Quantity: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The unit the value was recorded in.
    public let unit: HealthUnit
    /// The value in ``unit``.
    public let value: Double

    /// Creates a quantity.
    public init(_ value: Double, _ unit: HealthUnit) {
        self.value = value
        self.unit = unit
    }

    /// The value converted into `unit`.
    /// - Throws: ``UnitError/incompatible(from:to:)`` when the dimensions differ.
    public func doubleValue(for unit: HealthUnit) throws(UnitError) -> Double {
        try self.unit.convert(value, to: unit)
    }

    /// Whether the quantity can be expressed in `unit`.
    public func isCompatible(with unit: HealthUnit) -> Bool {
        self.unit.isCompatible(with: unit)
    }

    public var description: String { "\(value) \(unit)" }
}

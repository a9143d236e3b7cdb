/// A kind of correlation, like HealthKit's HKCorrelationType: a record that groups samples
/// measured together, with the member types it holds, exactly one sample of each.
public struct CorrelationType: Hashable, Sendable, CustomStringConvertible {
    /// The stable identifier used in JSON, SQLite and the CLI, for example `bloodPressure`.
    public let identifier: String
    /// The types of the members, one sample of each, in this order.
    public let memberTypes: [QuantityType]

    /// Creates a correlation type. Use the static members for the built-in types.
    public init(identifier: String, memberTypes: [QuantityType]) {
        self.identifier = identifier
        self.memberTypes = memberTypes
    }

    public var description: String { identifier }

    /// Blood pressure (HKCorrelationTypeIdentifier.bloodPressure): one systolic and one diastolic
    /// sample, as HealthKit requires.
    public static let bloodPressure = CorrelationType(
        identifier: "bloodPressure", memberTypes: [.bloodPressureSystolic, .bloodPressureDiastolic])

    /// Every built-in correlation type.
    public static let builtIn: [CorrelationType] = [.bloodPressure]

    /// The built-in correlation type with this identifier, or nil.
    public static func named(_ identifier: String) -> CorrelationType? {
        builtIn.first { $0.identifier == identifier }
    }
}

extension CorrelationType: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let identifier = try container.decode(String.self)
        guard let type = CorrelationType.named(identifier) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "unknown correlation type \"\(identifier)\"; known: "
                    + CorrelationType.builtIn.map(\.identifier).joined(separator: ", "))
        }
        self = type
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(identifier)
    }
}

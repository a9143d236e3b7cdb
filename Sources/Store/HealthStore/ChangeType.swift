public import HealthModel

/// The objects a change query asks for: one quantity or correlation type, or all heartbeat
/// series, or all workouts. Named in the change log by ``identifier``.
public enum ChangeType: Hashable, Sendable, CustomStringConvertible {
    case quantity(QuantityType)
    case correlation(CorrelationType)
    case heartbeatSeries
    case workout

    /// The name stored in the change log's `type` column: the type's identifier, or
    /// `heartbeatSeries` / `workout`.
    public var identifier: String {
        switch self {
        case .quantity(let type): type.identifier
        case .correlation(let type): type.identifier
        case .heartbeatSeries: "heartbeatSeries"
        case .workout: "workout"
        }
    }

    /// The type named `name` (as ``identifier`` spells it), or nil.
    public static func named(_ name: String) -> ChangeType? {
        switch name {
        case "heartbeatSeries": .heartbeatSeries
        case "workout": .workout
        default: QuantityType.named(name).map(ChangeType.quantity) ?? CorrelationType.named(name).map(ChangeType.correlation)
        }
    }

    public var description: String { identifier }

    /// The kind of object of this type.
    public var kind: HealthRecordKind {
        switch self {
        case .quantity: .quantity
        case .correlation: .correlation
        case .heartbeatSeries: .heartbeatSeries
        case .workout: .workout
        }
    }
}

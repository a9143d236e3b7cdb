/// Why a sample could not be created.
public enum SampleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The quantity's unit does not have the dimension of the type's canonical unit.
    case unitMismatch(type: String, unit: String, expected: String)
    /// The end date is before the start date.
    case endBeforeStart
    /// A value that cannot be stored: NaN or infinite.
    case notFinite(type: String)
    /// Heartbeat times must be non-negative and non-decreasing.
    case heartbeatsOutOfOrder
    /// A correlation needs exactly one sample of each member type and nothing else.
    case correlationMembers(type: String, expected: String)
    /// A correlation's member lies (partly) outside the correlation's interval.
    case memberOutsideCorrelation(type: String)
    /// A quantity series needs at least one quantity, ordered by start date.
    case seriesOutOfOrder

    public var description: String {
        switch self {
        case .unitMismatch(let type, let unit, let expected):
            "\(type) cannot be recorded in \(unit); it needs a unit compatible with \(expected)"
        case .endBeforeStart: "a sample's end date is before its start date"
        case .notFinite(let type): "\(type) value is not a finite number"
        case .heartbeatsOutOfOrder: "heartbeat times must be non-negative and non-decreasing"
        case .correlationMembers(let type, let expected): "a \(type) correlation holds exactly \(expected)"
        case .memberOutsideCorrelation(let type): "a \(type) correlation's samples must lie within its interval"
        case .seriesOutOfOrder: "a quantity series holds at least one quantity, ordered by start date"
        }
    }

    /// Whether the error is a unit that does not fit the type.
    public var isUnitMismatch: Bool {
        if case .unitMismatch = self { return true }
        return false
    }
}

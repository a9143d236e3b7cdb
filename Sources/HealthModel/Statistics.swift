public import Foundation

/// Statistics of one quantity type over an interval (HKStatistics), in the type's canonical unit.
///
/// Cumulative types fill ``sum``; discrete types fill ``average``, ``minimum``, ``maximum`` and
/// ``mostRecent``. An interval without samples has `sampleCount == 0` and every value nil: it is
/// reported as empty, never skipped.
public struct QuantityStatistics: Hashable, Sendable, Codable {
    public let type: QuantityType
    public let startDate: Date
    public let endDate: Date
    public let sampleCount: Int
    public let sum: Double?
    public let average: Double?
    public let minimum: Double?
    public let maximum: Double?
    public let mostRecent: Double?
    public let mostRecentDate: Date?

    public init(
        type: QuantityType, startDate: Date, endDate: Date, sampleCount: Int, sum: Double? = nil,
        average: Double? = nil, minimum: Double? = nil, maximum: Double? = nil,
        mostRecent: Double? = nil, mostRecentDate: Date? = nil
    ) {
        self.type = type
        self.startDate = startDate
        self.endDate = endDate
        self.sampleCount = sampleCount
        self.sum = sum
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.mostRecent = mostRecent
        self.mostRecentDate = mostRecentDate
    }

    /// The unit of every value: the type's canonical unit.
    public var unit: HealthUnit { type.canonicalUnit }

    /// Whether no sample fell into the interval.
    public var isEmpty: Bool { sampleCount == 0 }
}

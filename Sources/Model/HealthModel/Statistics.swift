public import FoundationEssentials

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

/// Which values a statistics query computes (HKStatisticsOptions). A value not asked for is nil
/// in the result; ``QuantityStatistics/sampleCount`` is always counted.
///
/// The options follow the type's aggregation style, as HealthKit's do: ``sum`` is the cumulative
/// option, the other four are discrete ones, and a query mixing a type with the other style's
/// options is refused (``problem(for:)``).
public struct StatisticsOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let sum = StatisticsOptions(rawValue: 1 << 0)
    public static let average = StatisticsOptions(rawValue: 1 << 1)
    public static let minimum = StatisticsOptions(rawValue: 1 << 2)
    public static let maximum = StatisticsOptions(rawValue: 1 << 3)
    public static let mostRecent = StatisticsOptions(rawValue: 1 << 4)

    /// Every discrete option.
    public static let discrete: StatisticsOptions = [.average, .minimum, .maximum, .mostRecent]
    /// Every cumulative option.
    public static let cumulative: StatisticsOptions = [.sum]

    /// Every option of `style`: what a query computes when it is given none.
    public static func all(for style: AggregationStyle) -> StatisticsOptions {
        style == .discrete ? .discrete : .cumulative
    }

    /// The options by name, as the command line spells them.
    public static let names: [(name: String, option: StatisticsOptions)] = [
        ("sum", .sum), ("average", .average), ("minimum", .minimum), ("maximum", .maximum), ("mostRecent", .mostRecent),
    ]

    /// Why these options do not fit `type`, or nil when they do.
    public func problem(for type: QuantityType) -> String? {
        let allowed = Self.all(for: type.aggregationStyle)
        if isEmpty { return "no statistics asked for" }
        let foreign = subtracting(allowed)
        guard foreign.isEmpty else {
            let style = type.aggregationStyle.rawValue
            return "\(type.identifier) is \(style): \(Self.describe(foreign)) does not apply; its options are "
                + Self.describe(allowed)
        }
        return nil
    }

    /// The names of `options`, comma-separated.
    static func describe(_ options: StatisticsOptions) -> String {
        names.filter { options.contains($0.option) }.map(\.name).joined(separator: ", ")
    }
}

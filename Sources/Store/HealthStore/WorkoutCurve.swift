public import HealthModel

/// A stored workout's condensed curve of one quantity type: a point every ``step``.
public struct WorkoutCurve: Hashable, Sendable {
    public var type: QuantityType
    /// The points, in the type's canonical unit: each covers `step` from its start (the last
    /// may be shorter), a discrete type's mean or a cumulative type's sum over it.
    public var points: [SeriesQuantity]

    /// The length of time a point covers.
    public static let step = Duration.seconds(5)

    /// The points of each type among `samples`, in steps from `start` (µs).
    static func condense(_ samples: [QuantitySample], from start: Int64) -> [(QuantityType, [QuantitySeriesEncoding.Quantity])] {
        let width = OpenQuantitySeries.microseconds(step)
        var byType: [QuantityType: [Int64: (sum: Double, count: Int)]] = [:]
        for sample in samples {
            let begin = StoreTime.microseconds(sample.startDate)
            let index = max(0, (begin - start) / width)
            byType[sample.type, default: [:]][index, default: (0, 0)].sum += sample.canonicalValue
            byType[sample.type, default: [:]][index, default: (0, 0)].count += 1
        }
        return byType.sorted { $0.key.identifier < $1.key.identifier }.map { type, steps in
            let points = steps.sorted { $0.key < $1.key }.map { index, bucket in
                QuantitySeriesEncoding.Quantity(
                    offset: index * width, duration: width,
                    value: type.aggregationStyle == .cumulative ? bucket.sum : bucket.sum / Double(bucket.count))
            }
            return (type, points)
        }
    }
}

import FoundationEssentials
import GatewayRuntime
public import HealthModel

/// What a stored workout's chart and export draw: each type's raw readings while the store holds
/// all of them, else the type's curve (the store's condensed copy, a point every few seconds: a
/// discrete type's mean over it, a cumulative type's sum) once retention pruned some of them.
///
/// A type's raw readings count as whole when every point of its curve has a reading starting in
/// the point's interval (the first point also takes those starting earlier), as the curve was
/// condensed from them when the workout was stored; a type without a curve (a workout stored
/// before curves were kept) uses what raw readings there are.
public struct WorkoutReadings: Hashable, Sendable {
    /// The readings by start date: raw samples, and each curve point that stands in as a sample
    /// covering its interval (up to the workout's end at most), in the type's canonical unit,
    /// with no device.
    public var samples: [QuantitySample]
    /// The types drawn from their curves, by identifier; empty when every type's raw readings
    /// are there.
    public var typesFromCurves: [QuantityType]

    /// The readings of `workout` from its raw `samples` and its `curves` (each type's points, in
    /// the type's canonical unit, by start date).
    /// - Throws: ``SampleError`` for a curve point that is not a sample (a value that is not
    ///   finite, an interval that runs backwards): the store holds a damaged curve.
    public init(
        workout: Workout, samples: [QuantitySample], curves: [(type: QuantityType, points: [SeriesQuantity])]
    ) throws(SampleError) {
        var byType: [QuantityType: [QuantitySample]] = [:]
        for sample in samples { byType[sample.type, default: []].append(sample) }
        var readings = samples
        var fromCurves: [QuantityType] = []
        for (index, curve) in curves.enumerated() where !curve.points.isEmpty {
            let starts = (byType[curve.type] ?? []).map(\.startDate).sorted()
            guard !Self.covers(starts, curve.points) else { continue }
            readings.removeAll { $0.type == curve.type }
            // One derived id per curve, and per point within it, so two views of the same workout
            // give the same samples.
            let series = SampleID(quantity: index, ofSeries: workout.id)
            for (position, point) in curve.points.enumerated() {
                // A step that began before the workout's end ends with it: the last step is shorter.
                let end = min(point.endDate, max(point.startDate, workout.endDate))
                readings.append(try QuantitySample(
                    id: SampleID(quantity: position, ofSeries: series), type: curve.type,
                    quantity: Quantity(point.value, curve.type.canonicalUnit), start: point.startDate, end: end))
            }
            fromCurves.append(curve.type)
        }
        self.samples = readings.sorted { ($0.startDate, $0.id) < ($1.startDate, $1.id) }
        typesFromCurves = fromCurves.sorted { $0.identifier < $1.identifier }
    }

    /// Whether every point has a reading starting in its interval (the first point: before its
    /// end), `starts` sorted.
    static func covers(_ starts: [Date], _ points: [SeriesQuantity]) -> Bool {
        var next = 0
        for (index, point) in points.enumerated() {
            if index > 0 {
                while next < starts.count, starts[next] < point.startDate { next += 1 }
            }
            guard next < starts.count, starts[next] < point.endDate else { return false }
        }
        return true
    }

    /// A line for people saying which types come from their curves, or nil when none does:
    /// `heartRate and cyclingPower from the workout's 5-second curves (their raw samples were
    /// pruned: store.retentionDays)`.
    public func curveNote(step: Duration) -> String? {
        guard !typesFromCurves.isEmpty else { return nil }
        let names = typesFromCurves.map(\.identifier)
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
        return "\(list) from the workout's \(Int(step.seconds))-second curves (their raw samples were pruned: store.retentionDays)"
    }
}

import AsyncPrimitives
import FoundationEssentials
public import HealthModel

/// The order of query results by start date.
public enum SampleOrder: String, Hashable, Sendable, CaseIterable {
    /// Oldest first.
    case ascending = "asc"
    /// Newest first.
    case descending = "desc"
}

/// A workout read back with the records it collected.
public struct StoredWorkout: Hashable, Sendable {
    /// The workout with its events, activities and statistics.
    public var workout: Workout
    /// The quantity samples it collected that are in the store (a series' quantities each as a
    /// sample), by start date.
    public var samples: [QuantitySample]
    /// The heartbeat series it collected that are in the store, by start date.
    public var heartbeatSeries: [HeartbeatSeriesSample]
    /// Its condensed curves, kept whatever is pruned (``WorkoutCurve``); empty for a workout
    /// stored before they were written.
    public var curves: [WorkoutCurve]

    /// Bundles a workout with the records and curves found in the store.
    public init(
        workout: Workout, samples: [QuantitySample], heartbeatSeries: [HeartbeatSeriesSample], curves: [WorkoutCurve] = []
    ) {
        self.workout = workout
        self.samples = samples
        self.heartbeatSeries = heartbeatSeries
        self.curves = curves
    }
}

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

/// A workout read back with the records it links to.
public struct StoredWorkout: Hashable, Sendable {
    /// The workout with its events, activities, statistics and the uuids of its samples.
    public var workout: Workout
    /// The linked quantity samples that are in the store, by start date.
    public var samples: [QuantitySample]
    /// The linked heartbeat series that are in the store, by start date.
    public var heartbeatSeries: [HeartbeatSeriesSample]

    /// Bundles a workout with the linked records found in the store.
    public init(workout: Workout, samples: [QuantitySample], heartbeatSeries: [HeartbeatSeriesSample]) {
        self.workout = workout
        self.samples = samples
        self.heartbeatSeries = heartbeatSeries
    }
}

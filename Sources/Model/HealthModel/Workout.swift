public import FoundationEssentials

/// The kind of activity of a workout or of one activity in a multisport workout.
public enum WorkoutActivityType: String, Hashable, Sendable, Codable, CaseIterable {
    case running, walking, cycling, hiking, rowing, elliptical, stairClimbing, swimming
    case functionalStrengthTraining, highIntensityIntervalTraining, yoga, transition, other
}

/// The kind of a workout event (HKWorkoutEventType).
public enum WorkoutEventType: String, Hashable, Sendable, Codable, CaseIterable {
    case pause, resume, lap, marker, segment
}

/// Something that happened during a workout. Instant events have `startDate == endDate`;
/// a segment covers an interval.
public struct WorkoutEvent: Hashable, Sendable, Codable {
    public var type: WorkoutEventType
    public var startDate: Date
    public var endDate: Date
    public var metadata: Metadata

    public init(type: WorkoutEventType, startDate: Date, endDate: Date? = nil, metadata: Metadata = Metadata()) {
        self.type = type
        self.startDate = startDate
        self.endDate = endDate ?? startDate
        self.metadata = metadata
    }
}

/// One activity of a workout, with its own type and statistics (HKWorkoutActivity).
public struct WorkoutActivity: Hashable, Sendable, Codable {
    public var id: SampleID
    public var activityType: WorkoutActivityType
    public var startDate: Date
    public var endDate: Date?
    public var statistics: [QuantityStatistics]

    public init(
        id: SampleID, activityType: WorkoutActivityType, startDate: Date, endDate: Date? = nil,
        statistics: [QuantityStatistics] = []
    ) {
        self.id = id
        self.activityType = activityType
        self.startDate = startDate
        self.endDate = endDate
        self.statistics = statistics
    }
}

/// A finished workout (HKWorkout): what was done, when, and the totals. Its samples are found by
/// what it says of itself (its time, running intervals, types and devices), as HealthKit finds a
/// workout's samples by predicate; it lists none.
public struct Workout: Hashable, Sendable, Codable {
    public var id: SampleID
    public var activityType: WorkoutActivityType
    public var startDate: Date
    public var endDate: Date
    /// Seconds of running time: the interval minus every pause.
    public var duration: Double
    public var events: [WorkoutEvent]
    public var activities: [WorkoutActivity]
    /// Statistics per quantity type over the running intervals.
    public var statistics: [QuantityStatistics]
    public var metadata: Metadata

    public init(
        id: SampleID, activityType: WorkoutActivityType, startDate: Date, endDate: Date,
        duration: Double, events: [WorkoutEvent] = [], activities: [WorkoutActivity] = [],
        statistics: [QuantityStatistics] = [], metadata: Metadata = Metadata()
    ) {
        self.id = id
        self.activityType = activityType
        self.startDate = startDate
        self.endDate = endDate
        self.duration = duration
        self.events = events
        self.activities = activities
        self.statistics = statistics
        self.metadata = metadata
    }

    /// The statistics of `type`, if the workout collected it.
    public func statistics(for type: QuantityType) -> QuantityStatistics? {
        statistics.first { $0.type == type }
    }
}

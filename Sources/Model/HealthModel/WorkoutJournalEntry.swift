public import FoundationEssentials

/// One acknowledged command of a workout, as the workout journal keeps it: the action, when
/// it happened, and the arguments the action needs. Replaying a workout's entries in order
/// through the workout session's `apply` rebuilds its session exactly.
public struct WorkoutJournalEntry: Hashable, Sendable, Codable {
    /// The activity a ``WorkoutAction/beginActivity`` entry begins.
    public struct NewActivity: Hashable, Sendable, Codable {
        /// The new activity's identifier.
        public var id: SampleID
        /// The new activity's type.
        public var type: WorkoutActivityType

        /// Creates a new-activity argument.
        public init(id: SampleID, type: WorkoutActivityType) {
            self.id = id
            self.type = type
        }
    }

    /// What was done.
    public var action: WorkoutAction
    /// When (the gateway clock when the command was applied).
    public var date: Date
    /// For ``WorkoutAction/beginActivity``: the activity begun.
    public var newActivity: NewActivity?
    /// For ``WorkoutAction/segment``: where the segment begins.
    public var segmentStart: Date?
    /// Metadata of the event the action records (a marker's note), if any.
    public var metadata: Metadata
    /// The base of the gateway's clock `date` was read on: when the clock steps, the store moves
    /// the entry onto the new base (``ClockBase``). nil: the entry is never moved.
    public var clockBase: ClockBase?

    /// Creates an entry.
    public init(
        action: WorkoutAction, date: Date, newActivity: NewActivity? = nil, segmentStart: Date? = nil,
        metadata: Metadata = Metadata(), clockBase: ClockBase? = nil
    ) {
        self.clockBase = clockBase
        self.action = action
        self.date = date
        self.newActivity = newActivity
        self.segmentStart = segmentStart
        self.metadata = metadata
    }
}

/// A workout in progress (or ended but not yet stored) as the workout journal returns it.
public struct JournaledWorkout: Hashable, Sendable {
    /// What the workout is.
    public var definition: WorkoutDefinition
    /// Its acknowledged commands, in order (the first two are `prepare` and `start`).
    public var entries: [WorkoutJournalEntry]

    /// Creates a journaled workout.
    public init(definition: WorkoutDefinition, entries: [WorkoutJournalEntry]) {
        self.definition = definition
        self.entries = entries
    }

    /// Whether its last entry ends it.
    public var hasEnded: Bool { entries.last?.action == .end }
}

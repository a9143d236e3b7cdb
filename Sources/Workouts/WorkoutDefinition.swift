public import HealthModel

/// What a workout is, fixed when it starts: its identifier, activity type and what it collects.
///
/// Together with its ``WorkoutJournalEntry`` list it is everything a ``WorkoutStateStore`` keeps
/// of a workout in progress; the session is rebuilt by replaying the entries (see
/// ``LiveWorkout/replay(_:records:)``).
public struct WorkoutDefinition: Hashable, Sendable, Codable {
    /// The workout's identifier (the finished ``Workout`` keeps it).
    public var id: SampleID
    /// The activity type of the first activity; the workout's type.
    public var activityType: WorkoutActivityType
    /// The identifier of the first activity.
    public var firstActivityID: SampleID
    /// Devices to collect from (local identifier or name); nil collects from every device.
    public var devices: [String]?
    /// Quantity types to collect.
    public var types: [QuantityType]
    /// The participant whose workout it is (see ``Participant``); nil for the gateway's own
    /// single-person workout.
    public var participant: String?

    /// Creates a definition.
    public init(
        id: SampleID, activityType: WorkoutActivityType, firstActivityID: SampleID, devices: [String]? = nil,
        types: [QuantityType] = WorkoutSession.defaultTypes, participant: String? = nil
    ) {
        self.participant = participant
        self.id = id
        self.activityType = activityType
        self.firstActivityID = firstActivityID
        self.devices = devices
        self.types = types
    }
}


/// What a workout is, fixed when it starts: its identifier, activity type and what it collects.
///
/// Together with its ``WorkoutJournalEntry`` list it is everything the workout journal keeps
/// of a workout in progress; the session is rebuilt by replaying the entries (see
/// the live workout's replay).
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
    /// The participant whose workout it is (a participant of a group workout); nil for the gateway's own
    /// single-person workout.
    public var participant: String?

    /// The types collected by default: what heart-rate monitors and pedometers report.
    public static let defaultTypes: [QuantityType] = [
        .heartRate, .stepCount, .distanceWalkingRunning, .activeEnergyBurned, .runningSpeed,
        .runningStrideLength,
    ]

    /// The types collected for `activity` when a start names none: a bike or a rower adds its
    /// machine's power, cadence (stroke rate), speed and distance to ``defaultTypes``, which stay
    /// for the legs of a multisport workout that follow (a triathlon's run after its ride).
    public static func defaultTypes(for activity: WorkoutActivityType) -> [QuantityType] {
        switch activity {
        case .cycling: defaultTypes + [.cyclingPower, .cyclingCadence, .cyclingSpeed, .distanceCycling]
        case .rowing: defaultTypes + [.rowingPower, .rowingStrokeRate, .rowingSpeed, .distanceRowing]
        default: defaultTypes
        }
    }

    /// Creates a definition.
    public init(
        id: SampleID, activityType: WorkoutActivityType, firstActivityID: SampleID, devices: [String]? = nil,
        types: [QuantityType] = WorkoutDefinition.defaultTypes, participant: String? = nil
    ) {
        self.participant = participant
        self.id = id
        self.activityType = activityType
        self.firstActivityID = firstActivityID
        self.devices = devices
        self.types = types
    }
}

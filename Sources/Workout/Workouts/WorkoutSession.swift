public import FoundationEssentials
public import HealthModel

/// A live workout session (HKWorkoutSession): the state machine, the events, the activities and
/// the running intervals. A value with no I/O: ``LiveWorkout`` holds one, and the
/// ``WorkoutController`` makes each applied action durable as a ``WorkoutJournalEntry``.
///
/// Every change goes through ``WorkoutSessionState/transition(for:)``, so an action the table
/// refuses changes nothing. Dates are clamped so they never run backwards (a wall clock that
/// steps back must not make a negative interval).
public struct WorkoutSession: Hashable, Sendable, Codable {
    /// The workout's identifier (the finished ``Workout`` keeps it).
    public let id: SampleID
    /// The activity type of the first activity; the workout's type.
    public let activityType: WorkoutActivityType
    /// The life-cycle state.
    public private(set) var state: WorkoutSessionState = .notStarted
    /// When it started; nil before `start`.
    public private(set) var startDate: Date?
    /// When it ended; nil before `end`.
    public private(set) var endDate: Date?
    /// Pause, resume, lap, marker and segment events in order.
    public private(set) var events: [WorkoutEvent] = []
    /// Activities in order; the last one is current while the session runs. Their statistics
    /// are filled in when the workout is built.
    public private(set) var activities: [WorkoutActivity] = []
    /// The intervals in which samples are collected and time is counted.
    public private(set) var runningIntervals: [RunningInterval] = []
    /// Devices to collect from (local identifier or name); nil collects from every device.
    public let devices: [String]?
    /// Quantity types to collect.
    public let types: [QuantityType]
    /// The participant whose workout it is; nil for the gateway's own (single-person) workout.
    public let participant: String?
    private let firstActivityID: SampleID
    private var lastDate: Date?
    private var lastLapDate: Date?

    /// A session in state `notStarted`.
    public init(
        id: SampleID, activityType: WorkoutActivityType, firstActivityID: SampleID,
        devices: [String]? = nil, types: [QuantityType] = WorkoutDefinition.defaultTypes, participant: String? = nil
    ) {
        self.init(
            WorkoutDefinition(
                id: id, activityType: activityType, firstActivityID: firstActivityID, devices: devices, types: types,
                participant: participant))
    }

    /// A session in state `notStarted` for `definition`.
    public init(_ definition: WorkoutDefinition) {
        participant = definition.participant
        id = definition.id
        activityType = definition.activityType
        firstActivityID = definition.firstActivityID
        devices = definition.devices
        types = definition.types
    }

    /// What the session is, as its store keeps it.
    public var definition: WorkoutDefinition {
        WorkoutDefinition(
            id: id, activityType: activityType, firstActivityID: firstActivityID, devices: devices, types: types,
            participant: participant)
    }

    /// Applies a journaled command; see ``apply(_:at:newActivity:segmentStart:metadata:)``.
    @discardableResult
    public mutating func apply(_ entry: WorkoutJournalEntry) throws(WorkoutError) -> WorkoutTransition {
        try apply(
            entry.action, at: entry.date, newActivity: entry.newActivity.map { ($0.id, $0.type) },
            segmentStart: entry.segmentStart, metadata: entry.metadata)
    }

    /// The running intervals as a timeline.
    public var timeline: RunningTimeline { RunningTimeline(runningIntervals) }

    /// Whether the session has started and not ended.
    public var isActive: Bool { [.running, .paused, .stopped].contains(state) }

    /// Applies `action` at `date`.
    /// - Parameters:
    ///   - newActivity: for ``WorkoutAction/beginActivity``: the new activity's id and type.
    ///   - segmentStart: for ``WorkoutAction/segment``: where the segment begins (default: `date`).
    ///   - metadata: attached to the event the action records, if any.
    /// - Returns: what the action did.
    /// - Throws: ``WorkoutError`` when the transition table refuses the action, or when
    ///   `beginActivity` lacks `newActivity`.
    @discardableResult
    public mutating func apply(
        _ action: WorkoutAction, at date: Date,
        newActivity: (id: SampleID, type: WorkoutActivityType)? = nil, segmentStart: Date? = nil,
        metadata: Metadata = Metadata()
    ) throws(WorkoutError) -> WorkoutTransition {
        let transition = try state.transition(for: action)
        if action == .beginActivity, newActivity == nil {
            throw WorkoutError(.invalidArgument, "beginActivity needs an activity type", state: state, action: action)
        }
        guard transition != .ignored else { return .ignored }
        let date = max(date, lastDate ?? date)
        lastDate = date
        switch action {
        case .prepare: break
        case .start:
            startDate = date
            runningIntervals.append(RunningInterval(start: date))
            activities.append(WorkoutActivity(id: firstActivityID, activityType: activityType, startDate: date))
        case .pause:
            closeInterval(at: date)
            events.append(WorkoutEvent(type: .pause, startDate: date, metadata: metadata))
        case .resume:
            runningIntervals.append(RunningInterval(start: date))
            events.append(WorkoutEvent(type: .resume, startDate: date, metadata: metadata))
        case .lap:
            events.append(WorkoutEvent(
                type: .lap, startDate: lastLapDate ?? startDate ?? date, endDate: date, metadata: metadata))
            lastLapDate = date
        case .marker:
            events.append(WorkoutEvent(type: .marker, startDate: date, metadata: metadata))
        case .segment:
            events.append(WorkoutEvent(
                type: .segment, startDate: min(segmentStart ?? date, date), endDate: date, metadata: metadata))
        case .beginActivity:
            if let newActivity {
                closeActivity(at: date)
                activities.append(WorkoutActivity(id: newActivity.id, activityType: newActivity.type, startDate: date))
            }
        case .stop:
            closeInterval(at: date)
        case .end:
            closeInterval(at: date)
            closeActivity(at: date)
            if startDate == nil { startDate = date }
            endDate = date
        }
        if case .moveTo(let next) = transition { state = next }
        return transition
    }

    /// Running seconds from the start until `date` (or the end).
    public func elapsedSeconds(at date: Date) -> Double {
        timeline.activeSeconds(until: endDate.map { min($0, date) } ?? date)
    }

    /// Replaces the statistics of the activities (when the workout is built).
    mutating func setActivityStatistics(_ statistics: [[QuantityStatistics]]) {
        for (index, value) in zip(activities.indices, statistics) { activities[index].statistics = value }
    }

    private mutating func closeInterval(at date: Date) {
        if let last = runningIntervals.indices.last, runningIntervals[last].end == nil {
            runningIntervals[last].end = date
        }
    }

    private mutating func closeActivity(at date: Date) {
        if let last = activities.indices.last, activities[last].endDate == nil {
            activities[last].endDate = date
        }
    }
}

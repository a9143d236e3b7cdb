/// The kinds of distance, power, cadence and speed a workout can hold, declared once for the
/// live snapshot, `workout list` and `show`, the chart and the FIT and TCX exports.
///
/// A workout may hold several kinds at once (a ride with a pedometer clipped on has cycling and
/// walking distance): each is kept apart, and the activity's own kind comes first.
public enum WorkoutMeasures {
    /// Each kind of distance with the name the views give it, in this order when no activity
    /// decides.
    public static let distances: [(type: QuantityType, name: String)] = [
        (.distanceWalkingRunning, "walking/running"), (.distanceCycling, "cycling"), (.distanceRowing, "rowing"),
    ]
    /// A machine's power: a bike's, a rower's, a treadmill's.
    public static let powerTypes: [QuantityType] = [.cyclingPower, .rowingPower, .runningPower]
    /// Cadence: a bike's crank, a rower's strokes.
    public static let cadenceTypes: [QuantityType] = [.cyclingCadence, .rowingStrokeRate]
    /// Speed: a bike's, a rower's, running speed.
    public static let speedTypes: [QuantityType] = [.cyclingSpeed, .rowingSpeed, .runningSpeed]

    /// The types of `activity` itself among the kinds above (a ride's cycling distance, power,
    /// cadence and speed); empty for an activity without its own.
    public static func ownTypes(of activity: WorkoutActivityType) -> Set<QuantityType> {
        switch activity {
        case .running, .walking, .hiking: [.distanceWalkingRunning, .runningPower, .runningSpeed]
        case .cycling: [.distanceCycling, .cyclingPower, .cyclingCadence, .cyclingSpeed]
        case .rowing: [.distanceRowing, .rowingPower, .rowingStrokeRate, .rowingSpeed]
        default: []
        }
    }

    /// `types` with those of `activity` first, the rest in their order.
    public static func ordered(_ types: [QuantityType], for activity: WorkoutActivityType) -> [QuantityType] {
        let own = ownTypes(of: activity)
        return types.filter { own.contains($0) } + types.filter { !own.contains($0) }
    }

    /// The name of a kind of distance (`cycling`), or the type's identifier.
    public static func name(of distance: QuantityType) -> String {
        distances.first { $0.type == distance }?.name ?? distance.identifier
    }
}

extension Workout {
    /// Each kind of distance the workout covered, in metres: the activity's own kind first.
    public var distances: [(type: QuantityType, meters: Double)] {
        WorkoutMeasures.ordered(WorkoutMeasures.distances.map(\.type), for: activityType).compactMap { type in
            statistics(for: type)?.sum.map { (type, $0) }
        }
    }

    /// The workout's distance as one figure: its activity's own kind (a ride's cycling distance,
    /// not the steps of a pedometer worn on it), else the first kind it has.
    public var distance: (type: QuantityType, meters: Double)? { distances.first }

    /// The statistics of its power, cadence and speed: for each, the first type with readings,
    /// the activity's own first.
    public var power: QuantityStatistics? { firstMeasured(WorkoutMeasures.powerTypes) }
    /// See ``power``.
    public var cadence: QuantityStatistics? { firstMeasured(WorkoutMeasures.cadenceTypes) }
    /// See ``power``.
    public var speed: QuantityStatistics? { firstMeasured(WorkoutMeasures.speedTypes) }

    private func firstMeasured(_ types: [QuantityType]) -> QuantityStatistics? {
        WorkoutMeasures.ordered(types, for: activityType).lazy.compactMap { statistics(for: $0) }
            .first { $0.sampleCount > 0 }
    }
}

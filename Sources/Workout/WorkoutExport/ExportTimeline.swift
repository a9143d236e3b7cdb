public import FoundationEssentials
public import HealthModel

/// One moment of a workout's readings, as FIT records and TCX trackpoints carry them: every
/// reading that ends in the same whole second, and the distance covered so far.
public struct ExportPoint: Hashable, Sendable {
    public var date: Date
    public var heartRate: Double?
    public var cadence: Double?
    /// Metres since the start (the distance samples of one kind up to this point, added up).
    public var distance: Double?
    public var speed: Double?
    public var power: Double?

    static let speedTypes = Set(WorkoutMeasures.speedTypes)
    static let powerTypes = Set(WorkoutMeasures.powerTypes)
    static let cadenceTypes = Set(WorkoutMeasures.cadenceTypes)

    /// The points of `samples`, in time order: one per whole second in which a reading ends. The
    /// distance is that of the samples of `distance` alone, one kind (a ride's cycling distance,
    /// not the pedometer's added to it); nil takes no distance.
    public static func points(of samples: [QuantitySample], distance distanceType: QuantityType?) -> [ExportPoint] {
        var points: [ExportPoint] = []
        var distance: Double?
        for sample in samples.sorted(by: { ($0.endDate, $0.startDate) < ($1.endDate, $1.startDate) }) {
            let second = Date(timeIntervalSince1970: sample.endDate.timeIntervalSince1970.rounded(.down))
            if points.last?.date != second { points.append(ExportPoint(date: second, distance: distance)) }
            let value = sample.canonicalValue
            switch sample.type {
            case .heartRate: points[points.count - 1].heartRate = value
            case let type where cadenceTypes.contains(type): points[points.count - 1].cadence = value
            case let type where speedTypes.contains(type): points[points.count - 1].speed = value
            case let type where powerTypes.contains(type): points[points.count - 1].power = value
            case distanceType:
                distance = (distance ?? 0) + value
                points[points.count - 1].distance = distance
            default: break
            }
        }
        return points
    }
}

/// A workout's running and paused time, and its laps, for export.
struct ExportTimeline {
    let workout: Workout
    /// Each moment the timer started (true) or stopped (false): the start, each pause and resume,
    /// the end.
    let timerChanges: [(Date, Bool)]

    init(_ workout: Workout) {
        self.workout = workout
        var changes: [(Date, Bool)] = [(workout.startDate, true)]
        for event in workout.events.sorted(by: { $0.startDate < $1.startDate }) {
            switch event.type {
            case .pause where changes.last?.1 == true: changes.append((event.startDate, false))
            case .resume where changes.last?.1 == false: changes.append((event.startDate, true))
            default: break
            }
        }
        if changes.last?.1 == true { changes.append((workout.endDate, false)) }
        timerChanges = changes
    }

    /// Seconds the timer ran between `start` and `end`.
    func timerSeconds(from start: Date, to end: Date) -> Double {
        var total = 0.0
        var runningSince: Date?
        for (date, running) in timerChanges {
            if running {
                runningSince = date
            } else if let since = runningSince {
                total += max(0, min(date, end).timeIntervalSince(max(since, start)))
                runningSince = nil
            }
        }
        return total
    }

    struct Lap {
        var start: Date
        var end: Date
        var timerSeconds: Double
        var distance: Double?
        var energy: Double?
        var averageHeartRate: Double?
        var maximumHeartRate: Double?
        var averagePower: Double?
        var maximumPower: Double?
        var averageCadence: Double?
        var maximumCadence: Double?
    }

    /// The laps: from the start to each lap marker, and from the last to the end. A reading
    /// belongs to the lap it ends in (after the lap's start, up to its end; the first lap takes
    /// those ending at the start or before).
    func laps(samples: [QuantitySample]) -> [Lap] {
        var bounds = [workout.startDate]
        for event in workout.events.sorted(by: { $0.startDate < $1.startDate })
        where event.type == .lap && event.startDate > bounds[bounds.count - 1] && event.startDate < workout.endDate {
            bounds.append(event.startDate)
        }
        bounds.append(workout.endDate)
        let starts = bounds.dropLast()
        var grouped = Array(repeating: [QuantitySample](), count: starts.count)
        for sample in samples {
            grouped[starts.lastIndex { sample.endDate > $0 } ?? 0].append(sample)
        }
        return zip(zip(bounds, bounds.dropFirst()), grouped).map { interval, within in
            let (start, end) = interval
            func values(_ type: QuantityType?) -> [Double] { within.filter { $0.type == type }.map(\.canonicalValue) }
            func average(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
            let rates = values(.heartRate)
            let distances = values(distanceType(samples: samples))
            let energy = values(.activeEnergyBurned)
            let powers = values(workout.power?.type)
            let cadences = values(workout.cadence?.type)
            return Lap(
                start: start, end: end, timerSeconds: timerSeconds(from: start, to: end),
                distance: distances.isEmpty ? nil : distances.reduce(0, +), energy: energy.isEmpty ? nil : energy.reduce(0, +),
                averageHeartRate: average(rates), maximumHeartRate: rates.max(),
                averagePower: average(powers), maximumPower: powers.max(),
                averageCadence: average(cadences), maximumCadence: cadences.max())
        }
    }

    /// The one kind of distance the file carries: the workout's (its activity's own kind, else
    /// the first it has, ``Workout/distance``), else the first kind among `samples` in the
    /// activity's order.
    func distanceType(samples: [QuantitySample]) -> QuantityType? {
        if let type = workout.distance?.type { return type }
        let present = Set(samples.map(\.type))
        return WorkoutMeasures.ordered(WorkoutMeasures.distances.map(\.type), for: workout.activityType)
            .first { present.contains($0) }
    }

    /// The workout's distance: that of its one kind (``Workout/distance``).
    static func distance(of workout: Workout) -> Double? {
        workout.distance?.meters
    }
}

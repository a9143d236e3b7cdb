public import FoundationEssentials
public import HealthModel

/// The live state of the workout: the JSON answer of `workout.status` (and of every other
/// `workout.*` command).
///
/// ```json
/// {"state": "running", "workoutID": "…", "activityType": "running", "currentActivityType": "running",
///  "startDate": "2026-11-22T04:00:00.000000Z", "elapsedSeconds": 1234.5,
///  "heartRate": {"current": 151, "average": 143.2, "minimum": 92, "maximum": 171},
///  "maximumHeartRate": 185, "zone": 3, "zoneSeconds": [60, 300, 600, 200, 0],
///  "steps": 3120, "distanceMeters": 4210.5, "energyKilocalories": 301.2,
///  "energySource": "heartRateEquation", "gaps": [{"start": "…", "end": "…", "seconds": 42}],
///  "gapSeconds": 42, "inGap": false, "laps": 3, "activities": 1, "restored": false}
/// ```
/// Absent figures are omitted (unknown, never zero): no `zone` without a maximum heart rate, no
/// `energyKilocalories` without a complete profile or device energy.
public struct WorkoutSnapshot: Hashable, Sendable, Codable {
    /// Heart-rate figures in beats per minute.
    public struct HeartRate: Hashable, Sendable, Codable {
        /// The latest reading; absent during a gap.
        public var current: Double?
        /// Time-weighted average (see ``WorkoutAnalysis``).
        public var average: Double?
        /// Lowest reading.
        public var minimum: Double?
        /// Highest reading.
        public var maximum: Double?

        /// Creates heart-rate figures.
        public init(current: Double? = nil, average: Double? = nil, minimum: Double? = nil, maximum: Double? = nil) {
            self.current = current
            self.average = average
            self.minimum = minimum
            self.maximum = maximum
        }
    }

    /// Figures of a machine's power, cadence or speed, in the type's canonical unit (W,
    /// count/min, m/s).
    public struct Gauge: Hashable, Sendable, Codable {
        /// The latest reading.
        public var current: Double?
        /// The mean of the readings.
        public var average: Double?
        /// The highest reading.
        public var maximum: Double?

        /// Creates figures.
        public init(current: Double? = nil, average: Double? = nil, maximum: Double? = nil) {
            self.current = current
            self.average = average
            self.maximum = maximum
        }
    }

    /// The session state (`notStarted` when there is no workout).
    public var state: WorkoutSessionState
    /// The workout's identifier.
    public var workoutID: SampleID?
    /// The workout's (first activity's) type.
    public var activityType: WorkoutActivityType?
    /// The current activity's type (multisport).
    public var currentActivityType: WorkoutActivityType?
    /// When the workout started.
    public var startDate: Date?
    /// When it ended; absent while it runs.
    public var endDate: Date?
    /// Running seconds, pauses excluded.
    public var elapsedSeconds: Double
    /// Heart-rate figures.
    public var heartRate: HeartRate
    /// The maximum heart rate the zones come from.
    public var maximumHeartRate: Double?
    /// The 1-based zone of the current heart rate.
    public var zone: Int?
    /// Seconds per zone (zone 1 first); empty when zones are unknown.
    public var zoneSeconds: [Double]
    /// Steps during running time.
    public var steps: Double?
    /// Distance during running time, meters: the activity's own kind (a ride's cycling distance,
    /// not a pedometer's), else the first kind it has (``WorkoutMeasures/distances``).
    public var distanceMeters: Double?
    /// Power (W) of a bike, rower or treadmill; absent without readings.
    public var power: Gauge?
    /// Cadence (count/min): a bike's crank or a rower's stroke rate; absent without readings.
    public var cadence: Gauge?
    /// Speed (m/s) of a bike or rower, else running speed; absent without readings.
    public var speed: Gauge?
    /// Active energy, kcal; absent when unavailable.
    public var energyKilocalories: Double?
    /// How the energy was obtained.
    public var energySource: EnergySource?
    /// Stretches without heart rate.
    public var gaps: [HeartRateGap]
    /// Running seconds spent in gaps.
    public var gapSeconds: Double
    /// Whether the heart-rate stream is in a gap now.
    public var inGap: Bool
    /// Laps marked.
    public var laps: Int
    /// Activities so far (more than one in a multisport workout).
    public var activities: Int
    /// Whether the session was rebuilt from the store after a gateway restart.
    public var restored: Bool
    /// The participant whose workout it is; absent for the gateway's own workout.
    public var participant: String?
    /// In the answer of `end` only: whether the store held the ended workout when the answer
    /// was given. False when the end's wait for the store ran out first: the end is committed
    /// to the workout's journal and the workout is stored once the store's writer commits it (a
    /// restart publishes it again), but it was not stored yet (`workout end` exits 75).
    /// Absent from every other answer, and from an older daemon.
    public var stored: Bool?
    /// In the answer of `end` only, when ``stored`` is false: how long the end waited for the
    /// store, in seconds (the configuration's `storeWaitSeconds`, less what the end's own work
    /// took; 0 for a workout kept until its publisher runs).
    public var storeWaitSeconds: Double?

    /// Creates a snapshot from its parts.
    public init(
        state: WorkoutSessionState, workoutID: SampleID? = nil, activityType: WorkoutActivityType? = nil,
        currentActivityType: WorkoutActivityType? = nil, startDate: Date? = nil, endDate: Date? = nil,
        elapsedSeconds: Double = 0, heartRate: HeartRate = HeartRate(), maximumHeartRate: Double? = nil,
        zone: Int? = nil, zoneSeconds: [Double] = [], steps: Double? = nil, distanceMeters: Double? = nil,
        energyKilocalories: Double? = nil, energySource: EnergySource? = nil, gaps: [HeartRateGap] = [],
        gapSeconds: Double = 0, inGap: Bool = false, laps: Int = 0, activities: Int = 0, restored: Bool = false,
        participant: String? = nil, power: Gauge? = nil, cadence: Gauge? = nil, speed: Gauge? = nil
    ) {
        self.participant = participant
        self.power = power
        self.cadence = cadence
        self.speed = speed
        self.state = state
        self.workoutID = workoutID
        self.activityType = activityType
        self.currentActivityType = currentActivityType
        self.startDate = startDate
        self.endDate = endDate
        self.elapsedSeconds = elapsedSeconds
        self.heartRate = heartRate
        self.maximumHeartRate = maximumHeartRate
        self.zone = zone
        self.zoneSeconds = zoneSeconds
        self.steps = steps
        self.distanceMeters = distanceMeters
        self.energyKilocalories = energyKilocalories
        self.energySource = energySource
        self.gaps = gaps
        self.gapSeconds = gapSeconds
        self.inGap = inGap
        self.laps = laps
        self.activities = activities
        self.restored = restored
    }

    /// The snapshot of `session` with its analysis.
    public init(session: WorkoutSession, analysis: WorkoutAnalysis, restored: Bool) {
        let heartRate = analysis.statistics(for: .heartRate)
        self.init(
            state: session.state, workoutID: session.id, activityType: session.activityType,
            currentActivityType: session.activities.last?.activityType, startDate: session.startDate,
            endDate: session.endDate, elapsedSeconds: analysis.elapsedSeconds,
            heartRate: HeartRate(
                current: analysis.currentHeartRate, average: heartRate?.average,
                minimum: heartRate?.minimum, maximum: heartRate?.maximum),
            maximumHeartRate: analysis.zones?.maximumHeartRate,
            zone: analysis.currentHeartRate.flatMap { analysis.zones?.zone(for: $0)?.number },
            zoneSeconds: analysis.zoneSeconds,
            steps: analysis.statistics(for: .stepCount)?.sum,
            distanceMeters: WorkoutMeasures.ordered(WorkoutMeasures.distances.map(\.type), for: session.activityType).lazy
                .compactMap { analysis.statistics(for: $0)?.sum }.first,
            energyKilocalories: analysis.energyKilocalories, energySource: analysis.energySource,
            gaps: analysis.gaps, gapSeconds: analysis.gaps.reduce(0) { $0 + $1.seconds },
            inGap: analysis.inGap, laps: session.events.filter { $0.type == .lap }.count,
            activities: session.activities.count, restored: restored, participant: session.participant,
            power: Self.gauge(analysis, WorkoutMeasures.ordered(Self.powerTypes, for: session.activityType)),
            cadence: Self.gauge(analysis, WorkoutMeasures.ordered(Self.cadenceTypes, for: session.activityType)),
            speed: Self.gauge(analysis, WorkoutMeasures.ordered(Self.speedTypes, for: session.activityType)))
    }

    /// The types ``power`` comes from, the first with readings winning, the activity's own first
    /// (``WorkoutMeasures``). The chart draws the same.
    public static let powerTypes: [QuantityType] = WorkoutMeasures.powerTypes
    /// The types ``cadence`` comes from: a bike's crank, a rower's strokes.
    public static let cadenceTypes: [QuantityType] = WorkoutMeasures.cadenceTypes
    /// The types ``speed`` comes from: a bike's, a rower's, running speed.
    public static let speedTypes: [QuantityType] = WorkoutMeasures.speedTypes

    /// The figures of the first of `types` that has readings.
    private static func gauge(_ analysis: WorkoutAnalysis, _ types: [QuantityType]) -> Gauge? {
        guard let statistics = types.lazy.compactMap({ analysis.statistics(for: $0) }).first(where: { $0.sampleCount > 0 })
        else { return nil }
        return Gauge(current: statistics.mostRecent, average: statistics.average, maximum: statistics.maximum)
    }
}

import FoundationEssentials
import HealthModel
import SQLite


/// Links heartbeat series to stored workouts by overlap, in the writer's transaction.
///
/// A heart-rate monitor publishes a series when it has collected a minute of beats (or when the
/// link drops), so the series being recorded when a workout ends reaches the store after the
/// workout. Whichever of the two is committed second links them: a series that overlaps a
/// running interval of a workout that collects heart rate from its device is linked to it
/// (`workout_samples`), exactly as ``Workouts/LiveWorkoutBuilder`` decides for a live workout.
enum WorkoutLinks {
    /// Links the series just written to every stored workout it belongs to.
    static func linkSeries(
        _ series: SQLiteValue, start: Date, end: Date, device: Device?, connection: SQLiteConnection
    ) throws(SQLiteError) {
        let candidates = try connection.query(
            """
            SELECT w.uuid, w.start_us, w.end_us FROM workouts w
            WHERE w.start_us <= ?2 AND w.end_us >= ?1
                AND EXISTS (SELECT 1 FROM workout_statistics s WHERE s.owner_uuid = w.uuid AND s.type = 'heartRate')
            """, [.integer(StoreTime.microseconds(start)), .integer(StoreTime.microseconds(end))])
        for row in candidates {
            guard let workoutStart = row.integer(1), let workoutEnd = row.integer(2) else { continue }
            let workout = row.values[0]
            let timeline = try timeline(of: workout, start: workoutStart, end: workoutEnd, connection: connection)
            guard timeline.overlaps(start: start, end: end),
                takes(device, devices: try list(.workoutDevices, of: workout, connection: connection),
                    excluded: try list(.excludedDevices, of: workout, connection: connection))
            else { continue }
            try connection.run(
                "INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [workout, series])
        }
    }

    /// Links every stored series that belongs to the workout just written.
    static func linkSeries(to workout: Workout, connection: SQLiteConnection) throws(SQLiteError) {
        guard workout.statistics.contains(where: { $0.type == .heartRate }) else { return }
        let timeline = RunningTimeline(workout: workout)
        let devices = workout.metadata[.workoutDevices].flatMap(Self.list(from:))
        let excluded = workout.metadata[.excludedDevices].flatMap(Self.list(from:))
        let rows = try connection.query(
            """
            SELECT h.uuid, h.start_us, h.end_us, d.name, d.local_identifier, d.radio_identifier FROM heartbeat_series h
            LEFT JOIN devices d ON d.id = h.device_id
            WHERE h.end_us >= ?1 AND h.start_us <= ?2
            """,
            [.integer(StoreTime.microseconds(workout.startDate)),
             .integer(StoreTime.microseconds(workout.endDate))])
        for row in rows {
            guard let start = row.integer(1), let end = row.integer(2) else { continue }
            let device = row.text(3) == nil && row.text(4) == nil && row.text(5) == nil
                ? nil : Device(name: row.text(3), localIdentifier: row.text(4), radioIdentifier: row.text(5))
            guard timeline.overlaps(
                start: StoreTime.date(microseconds: start), end: StoreTime.date(microseconds: end)),
                takes(device, devices: devices, excluded: excluded)
            else { continue }
            try connection.run(
                "INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [.blob(workout.id.bytes), row.values[0]])
        }
    }

    /// The running intervals of a stored workout, from its pause and resume events.
    private static func timeline(
        of workout: SQLiteValue, start: Int64, end: Int64, connection: SQLiteConnection
    ) throws(SQLiteError) -> RunningTimeline {
        var intervals: [RunningInterval] = []
        var current: Date? = StoreTime.date(microseconds: start)
        for event in try connection.query(
            """
            SELECT type, start_us FROM workout_events WHERE workout_uuid = ?1 AND type IN ('pause', 'resume')
            ORDER BY start_us, event_index
            """, [workout])
        {
            let date = StoreTime.date(microseconds: event.integer(1) ?? start)
            if event.text(0) == "pause", let begun = current {
                intervals.append(RunningInterval(start: begun, end: date))
                current = nil
            } else if event.text(0) == "resume", current == nil {
                current = date
            }
        }
        if let begun = current { intervals.append(RunningInterval(start: begun, end: StoreTime.date(microseconds: end))) }
        return RunningTimeline(intervals)
    }

    /// Whether a workout with the device list `devices` (nil: every device but `excluded`) takes
    /// a series from `device`, as the workout controller decides for a live one.
    private static func takes(_ device: Device?, devices: [String]?, excluded: [String]?) -> Bool {
        guard Device.matches(device, selection: devices) else { return false }
        guard devices == nil, let excluded, !excluded.isEmpty, let device else { return true }
        return !Device.matches(device, selection: excluded)
    }

    /// A comma-separated list in a stored workout's metadata under `key`, nil when absent.
    private static func list(_ key: MetadataKey, of workout: SQLiteValue, connection: SQLiteConnection) throws(SQLiteError) -> [String]? {
        try connection.query(
            """
            SELECT e.value FROM workouts w JOIN metadata_entries e ON e.set_id = w.metadata_set_id
            WHERE w.uuid = ?1 AND e.key = ?2
            """, [workout, .text(key.rawValue)]
        ).first?.text(0).flatMap { list(from: .string($0)) }
    }

    private static func list(from value: MetadataValue) -> [String]? {
        guard case .string(let text) = value else { return nil }
        return text.split(separator: ",").map(String.init)
    }
}

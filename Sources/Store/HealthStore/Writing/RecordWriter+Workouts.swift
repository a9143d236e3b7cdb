import FoundationEssentials
import HealthModel
import SQLite

// Workouts: the workout's row, its events, activities and statistics. Its samples are found by
// its time, types and devices (WorkoutRecordReader): no row links it to them.
extension RecordWriter {
    /// The workout's row and child rows; it replaces the workout in progress with its uuid.
    func write(_ workout: Workout) throws -> Outcome {
        // The workout in progress becomes the stored workout in this transaction (schema
        // version 4), also when this is a copy of a workout already stored.
        try connection.run("DELETE FROM live_workouts WHERE uuid = ?1", [.blob(workout.id.bytes)])
        let decision = try resolve(table: "workouts", kind: .workout, id: workout.id, metadata: workout.metadata)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(workout.id.bytes)
        try connection.run(
            """
            INSERT INTO workouts (anchor, uuid, activity_type, start_us, end_us, duration, sync_identifier, sync_version,
                metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """,
            [.integer(nextAnchor()), id, .text(workout.activityType.rawValue),
             .integer(StoreTime.microseconds(workout.startDate)), .integer(StoreTime.microseconds(workout.endDate)),
             .real(workout.duration)] + (try syncColumns(of: workout.metadata)))
        if hasTombstones { try removeTombstone(of: workout.id) }
        for (index, event) in workout.events.enumerated() {
            var metadataJSON = SQLiteValue.null
            if !event.metadata.isEmpty {
                do {
                    let data = try HealthJSON.makeEncoder().encode(event.metadata)
                    metadataJSON = .text(String(decoding: data, as: UTF8.self))
                } catch {
                    throw SQLiteError(.mismatch, message: "workout event metadata cannot be encoded: \(error)",
                                      context: "workout \(workout.id)")
                }
            }
            try connection.run(
                """
                INSERT INTO workout_events (workout_uuid, event_index, type, start_us, end_us, metadata)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                """,
                [id, .integer(Int64(index)), .text(event.type.rawValue), .integer(StoreTime.microseconds(event.startDate)),
                 .integer(StoreTime.microseconds(event.endDate)), metadataJSON])
        }
        for (index, activity) in workout.activities.enumerated() {
            let activityID = SQLiteValue.blob(activity.id.bytes)
            try connection.run(
                """
                INSERT INTO workout_activities (uuid, workout_uuid, activity_index, activity_type, start_us, end_us)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING
                """,
                [activityID, id, .integer(Int64(index)), .text(activity.activityType.rawValue),
                 .integer(StoreTime.microseconds(activity.startDate)),
                 activity.endDate.map { .integer(StoreTime.microseconds($0)) } ?? .null])
            for statistics in activity.statistics {
                try writeStatistics(statistics, owner: activityID, workout: id)
            }
        }
        for statistics in workout.statistics {
            try writeStatistics(statistics, owner: id, workout: id)
        }
        workoutsToCondense.append(workout)
        return decision == .replace ? .replaced : .inserted
    }

    private func writeStatistics(
        _ statistics: QuantityStatistics, owner: SQLiteValue, workout: SQLiteValue
    ) throws(SQLiteError) {
        func real(_ value: Double?) -> SQLiteValue { value.map(SQLiteValue.real) ?? .null }
        try connection.run(
            """
            INSERT INTO workout_statistics (owner_uuid, workout_uuid, type, start_us, end_us, sample_count,
                sum, average, minimum, maximum, most_recent, most_recent_us)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            ON CONFLICT DO NOTHING
            """,
            [owner, workout, .text(statistics.type.identifier), .integer(StoreTime.microseconds(statistics.startDate)),
             .integer(StoreTime.microseconds(statistics.endDate)), .integer(Int64(statistics.sampleCount)),
             real(statistics.sum), real(statistics.average), real(statistics.minimum), real(statistics.maximum),
             real(statistics.mostRecent), statistics.mostRecentDate.map { .integer(StoreTime.microseconds($0)) } ?? .null])
    }
}

import AsyncPrimitives
public import FoundationEssentials
public import HealthModel
import SQLite

extension HealthStore {
    // MARK: Heartbeat series

    /// The heartbeat series whose start date is in `[from, to)`, by start date, with their beats.
    public func heartbeatSeries(from: Date? = nil, to: Date? = nil) async throws(StoreError) -> [HeartbeatSeriesSample] {
        let bindings: [SQLiteValue] = [
            .integer(from.map(StoreTime.microseconds) ?? .min),
            .integer(to.map(StoreTime.microseconds) ?? .max),
        ]
        return try await read { connection throws(StoreError) in
            try RowDecoder.heartbeatSeries(
                connection, where: "h.start_us >= ?1 AND h.start_us < ?2", bindings, path: self.path).map(\.series)
        }
    }

    // MARK: Correlations

    /// The correlations of `type` whose start date is in `[from, to)`, by start date, each with
    /// its member samples.
    public func correlations(
        of type: CorrelationType, from: Date? = nil, to: Date? = nil
    ) async throws(StoreError) -> [CorrelationSample] {
        let bindings: [SQLiteValue] = [
            .text(type.identifier),
            .integer(from.map(StoreTime.microseconds) ?? .min),
            .integer(to.map(StoreTime.microseconds) ?? .max),
        ]
        return try await read { connection throws(StoreError) in
            try RowDecoder.correlations(
                connection, where: "c.type = ?1 AND c.start_us >= ?2 AND c.start_us < ?3", bindings, path: self.path
            ).map(\.correlation)
        }
    }

    // MARK: Workouts

    /// The workouts whose start date is in `[from, to)`, by start date, each with its events,
    /// activities, statistics and linked sample uuids.
    public func workouts(from: Date? = nil, to: Date? = nil) async throws(StoreError) -> [Workout] {
        let bindings: [SQLiteValue] = [
            .integer(from.map(StoreTime.microseconds) ?? .min),
            .integer(to.map(StoreTime.microseconds) ?? .max),
        ]
        return try await read { connection throws(StoreError) in
            try RowDecoder.workouts(connection, where: "start_us >= ?1 AND start_us < ?2", bindings, path: self.path)
                .map(\.workout)
        }
    }

    /// One workout with the quantity samples and heartbeat series it links to; nil when no
    /// workout has this uuid. Linked records not (yet) in the store are listed in
    /// `workout.sampleIDs` but absent from `samples` and `heartbeatSeries`.
    public func workout(id: SampleID) async throws(StoreError) -> StoredWorkout? {
        try await read { connection throws(StoreError) in
            let key = SQLiteValue.blob(id.bytes)
            guard let workout = try RowDecoder.workouts(connection, where: "uuid = ?1", [key], path: self.path).first?.workout
            else { return nil }
            // A linked sample ends inside the workout, so it starts at most the longest sample
            // duration stored before it: found through the (type_id, start_us) index, each type's
            // range then filtered by the links (samples have no index on their uuid alone).
            let samples = try RowDecoder.samples(
                connection,
                where: """
                    s.type_id IN (SELECT id FROM quantity_types)
                    AND s.start_us >= ?2 - (SELECT ifnull(max(max_duration_us), 0) FROM quantity_types) AND s.start_us <= ?3
                    AND s.uuid IN (SELECT sample_uuid FROM workout_samples WHERE workout_uuid = ?1)
                    """,
                orderBy: "s.start_us, s.uuid",
                [key, .integer(StoreTime.microseconds(workout.startDate)), .integer(StoreTime.microseconds(workout.endDate))],
                path: self.path)
            let series = try RowDecoder.heartbeatSeries(
                connection, where: "h.uuid IN (SELECT sample_uuid FROM workout_samples WHERE workout_uuid = ?1)",
                [key], path: self.path).map(\.series)
            return StoredWorkout(workout: workout, samples: samples, heartbeatSeries: series)
        }
    }
}

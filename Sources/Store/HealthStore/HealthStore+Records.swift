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

    /// One workout with the quantity samples and heartbeat series it collected, found by its
    /// time, running intervals, types and devices (``WorkoutRecordReader``); nil when no workout
    /// has this uuid. Records pruned since (`store.retentionDays`) or deleted are absent.
    public func workout(id: SampleID) async throws(StoreError) -> StoredWorkout? {
        try await read { connection throws(StoreError) in
            guard let workout = try RowDecoder.workouts(
                connection, where: "uuid = ?1", [.blob(id.bytes)], path: self.path).first?.workout
            else { return nil }
            let records = try WorkoutRecordReader.records(of: workout, connection, path: self.path)
            return StoredWorkout(
                workout: workout, samples: records.samples, heartbeatSeries: records.heartbeatSeries,
                curves: try RowDecoder.curves(of: id, connection, path: self.path))
        }
    }
}

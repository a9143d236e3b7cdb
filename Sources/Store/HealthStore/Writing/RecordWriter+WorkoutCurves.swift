import HealthModel
import SQLite

// A finished workout's curves: each quantity type it collected, condensed to a point every
// ``WorkoutCurve/step`` (the mean of a discrete type's values starting in it, the sum of a
// cumulative type's), written with the workout into `workout_curves`. Its chart and its export
// outlive the raw samples that `store.retentionDays` prunes.
extension RecordWriter {
    /// Writes the curves of the workouts the transaction stored, from the records the store
    /// holds for them at its end: what the transaction folded into series is in their rows
    /// by then. Only inside ``transaction(_:)``, once, after ``writeSeriesChanges()``.
    func writeCurves() throws {
        for workout in workoutsToCondense { try writeCurves(of: workout) }
        workoutsToCondense = []
    }

    /// Writes `workout`'s curves from the records the store holds for it now (replacing any).
    private func writeCurves(of workout: Workout) throws {
        let key = SQLiteValue.blob(workout.id.bytes)
        try connection.run("DELETE FROM workout_curves WHERE workout_uuid = ?1", [key])
        let samples = try WorkoutRecordReader.records(of: workout, connection, path: path).samples
        let start = StoreTime.microseconds(workout.startDate)
        for (type, points) in WorkoutCurve.condense(samples, from: start) {
            let (typeID, canonicalUnitID) = try typeIDs(for: type)
            try connection.run(
                "INSERT INTO workout_curves (workout_uuid, type_id, unit_id, start_us, quantities) VALUES (?1, ?2, ?3, ?4, ?5)",
                [key, .integer(typeID), .integer(canonicalUnitID), .integer(start), .blob(QuantitySeriesEncoding.encode(points))])
        }
    }
}

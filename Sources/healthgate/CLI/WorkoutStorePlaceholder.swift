import HealthModel

// PLACEHOLDER (workouts branch): `workout list`, `show` and `chart` read finished workouts from
// the SQLite store, whose query API (`workouts()`, `workout(id:)` and the heart-rate samples of
// a workout) is being written on another branch. Replace these two functions with calls to it;
// the formatting (`WorkoutFormat`, `WorkoutChart`) is done and tested in the Workouts module.

/// Every stored workout, newest first.
func loadStoredWorkouts(context: CommandContext) async throws -> [Workout] {
    throw CommandError(.unavailable, "reading workouts needs the SQLite store's workout queries, which this build does not have yet")
}

/// One stored workout and the heart-rate samples linked to it.
func loadStoredWorkout(id: SampleID, context: CommandContext) async throws -> (workout: Workout, heartRate: [QuantitySample]) {
    throw CommandError(.unavailable, "reading workouts needs the SQLite store's workout queries, which this build does not have yet")
}

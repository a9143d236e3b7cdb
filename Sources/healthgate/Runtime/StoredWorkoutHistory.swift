import HealthModel
import SQLiteStore
import WebBoard

/// The board's history from the SQLite store the gateway writes: opened read-only for each
/// request, as `healthgate workout list` does, so it never holds the writer's file open.
struct StoredWorkoutHistory: WorkoutHistory {
    let path: String

    func workouts() async throws -> [Workout] {
        let store = try await SQLiteSampleStore.open(path: path)
        return try await store.workouts().sorted { $0.startDate > $1.startDate }
    }

    func workout(id: SampleID) async throws -> (workout: Workout, samples: [QuantitySample])? {
        let store = try await SQLiteSampleStore.open(path: path)
        guard let stored = try await store.workout(id: id) else { return nil }
        return (stored.workout, stored.samples)
    }
}

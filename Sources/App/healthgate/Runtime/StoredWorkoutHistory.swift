import HealthModel
import HealthStore
import WebBoard
import WorkoutPresentation

/// The board's history: the finished workouts in the gateway's store, read on the store's
/// readers (never blocking the writer).
struct StoredWorkoutHistory: WorkoutHistory {
    let store: HealthStore

    func workouts() async throws -> [Workout] {
        try await store.workouts().sorted { $0.startDate > $1.startDate }
    }

    /// The workout with its raw samples, or a type's curve where retention pruned that type's
    /// samples (``WorkoutReadings``), as `workout chart` draws it.
    func workout(id: SampleID) async throws -> (workout: Workout, samples: [QuantitySample])? {
        guard let stored = try await store.workout(id: id) else { return nil }
        return (stored.workout, try stored.readings().samples)
    }
}

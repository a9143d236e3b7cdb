import HealthModel
import HealthStore
import WebBoard

/// The board's history: the finished workouts in the gateway's store, read on the store's
/// readers (never blocking the writer).
struct StoredWorkoutHistory: WorkoutHistory {
    let store: HealthStore

    func workouts() async throws -> [Workout] {
        try await store.workouts().sorted { $0.startDate > $1.startDate }
    }

    func workout(id: SampleID) async throws -> (workout: Workout, samples: [QuantitySample])? {
        guard let stored = try await store.workout(id: id) else { return nil }
        return (stored.workout, stored.samples)
    }
}

public import HealthModel

/// Where the board's history page reads stored workouts: the executable's SQLite store.
///
/// Called from the web server's connection threads (bridged from there, see ``BoardServer``).
public protocol WorkoutHistory: Sendable {
    /// Every stored workout, newest first.
    func workouts() async throws -> [Workout]

    /// One stored workout with its readings (its raw samples, or a type's curve points once
    /// retention pruned them); nil if there is none with this id.
    func workout(id: SampleID) async throws -> (workout: Workout, samples: [QuantitySample])?
}

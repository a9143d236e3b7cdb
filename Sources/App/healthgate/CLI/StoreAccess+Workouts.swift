import HealthModel
import HealthStore
import WorkoutPresentation

/// The finished workouts `workout list`, `show`, `chart` and `export` read from the store
/// (`--db PATH`, default the data directory's store). Errors map like `healthgate query`'s.
extension StoreAccess {
    /// Every stored workout, newest first.
    static func workouts(_ arguments: ParsedArguments, context: CommandContext) async throws -> [Workout] {
        let store = try await open(arguments, context: context)
        let workouts = try await call { () async throws(StoreError) in try await store.workouts() }
        return workouts.sorted { $0.startDate > $1.startDate }
    }

    /// One stored workout and what its chart and export draw: its raw samples (found by its
    /// time, types and devices), or a type's curve where retention pruned that type's samples.
    /// - Throws: ``CommandError`` with status 66 when the store holds no workout `id`, 65 when
    ///   its curve is damaged.
    static func workout(id: SampleID, _ arguments: ParsedArguments, context: CommandContext) async throws
        -> (workout: Workout, readings: WorkoutReadings)
    {
        let stored = try await storedWorkout(id: id, arguments, context: context)
        do {
            return (stored.workout, try stored.readings())
        } catch {
            throw CommandError(.dataError, "workout \(id): its curve is damaged: \(error)")
        }
    }

    /// One stored workout with the samples and heartbeat series it reads by its time, types and
    /// devices (``HealthStore/workout(id:)``).
    /// - Throws: ``CommandError`` with status 66 when the store holds no workout `id`.
    static func storedWorkout(id: SampleID, _ arguments: ParsedArguments, context: CommandContext) async throws -> StoredWorkout {
        let store = try await open(arguments, context: context)
        guard let stored = try await call({ () async throws(StoreError) in try await store.workout(id: id) }) else {
            throw CommandError(.noInput, "no workout \(id) in \(store.path); 'healthgate workout list' shows the stored ones")
        }
        return stored
    }
}

import HealthModel
import HealthStore

/// Reads finished workouts from the store for `workout list`, `show` and `chart`
/// (`--db PATH`, default the data directory's store). Errors map like `healthgate query`'s.

/// Every stored workout, newest first.
func loadStoredWorkouts(arguments: ParsedArguments, context: CommandContext) async throws -> [Workout] {
    let store = try await QueryCommand.open(arguments, context: context)
    let workouts = try await QueryCommand.storeCall { () async throws(StoreError) in try await store.workouts() }
    return workouts.sorted { $0.startDate > $1.startDate }
}

/// One stored workout and the samples linked to it, by start date.
func loadStoredWorkout(id: SampleID, arguments: ParsedArguments, context: CommandContext) async throws
    -> (workout: Workout, samples: [QuantitySample])
{
    let store = try await QueryCommand.open(arguments, context: context)
    guard let stored = try await QueryCommand.storeCall({ () async throws(StoreError) in try await store.workout(id: id) }) else {
        throw CommandError(.noInput, "no workout \(id) in \(store.path); 'healthgate workout list' shows the stored ones")
    }
    return (stored.workout, stored.samples)
}

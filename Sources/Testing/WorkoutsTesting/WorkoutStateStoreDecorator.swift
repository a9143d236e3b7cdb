public import Foundation
public import HealthModel
public import Workouts

/// A test's ``WorkoutStateStore`` that adds a behaviour to another one: each requirement it does
/// not implement itself goes to ``inner``. `recordsSamples` and `waitUntilStored` are not
/// forwarded: they keep ``WorkoutStateStore``'s defaults unless the decorator gives its own.
public protocol WorkoutStateStoreDecorator: WorkoutStateStore {
    /// The store that does the work.
    associatedtype Inner: WorkoutStateStore
    /// The store that does the work.
    var inner: Inner { get }
}

extension WorkoutStateStoreDecorator {
    /// The inner store's.
    public func journaledWorkouts() throws(WorkoutError) -> [JournaledWorkout] { try inner.journaledWorkouts() }

    /// Appended to the inner store.
    public func append(_ entries: [WorkoutJournalEntry], from index: Int, of definition: WorkoutDefinition) throws(WorkoutError) {
        try inner.append(entries, from: index, of: definition)
    }

    /// The inner store's.
    public func storedDate(_ date: Date) -> Date { inner.storedDate(date) }

    /// The inner store's.
    public func committedRecords(
        of types: [QuantityType], endingFrom start: Date, devices: [String]?, excluding others: [String], person: String?
    ) throws(WorkoutError) -> [HealthRecord] {
        try inner.committedRecords(of: types, endingFrom: start, devices: devices, excluding: others, person: person)
    }

    /// Told to the inner store.
    public func handedOver(_ id: SampleID) throws(WorkoutError) { try inner.handedOver(id) }
}

public import Workouts
import AsyncPrimitives
public import FoundationEssentials
public import HealthModel
public import HealthStore
public import GatewayRuntime

/// The gateway's store as the workout controller's journal (``WorkoutStateStore``) and the
/// participants' run-time assignments (``ParticipantAssignmentStore``): the workout in progress
/// lives in the store beside the samples it covers, committed through the store's one writer.
///
/// Every method blocks until its transaction is durable; the controller calls them from its own
/// serial queue. Store failures become ``WorkoutError`` with code ``WorkoutError/Code/persistence``.
/// The store's writer completes the contract: the transaction that stores a finished workout
/// deletes its journal rows, so ``handedOver(_:)`` has nothing to do.
public struct StoredWorkoutJournal: WorkoutStateStore, ParticipantAssignmentStore {
    /// The store.
    public let store: HealthStore
    private let clock: any GatewayClock

    /// The journal kept in `store`; assignments are dated by `clock`.
    public init(store: HealthStore, clock: any GatewayClock) {
        self.store = store
        self.clock = clock
    }

    public func journaledWorkouts() throws(WorkoutError) -> [JournaledWorkout] {
        try mapped { () throws(StoreError) in try store.workoutJournal() }
    }

    public func append(_ entries: [WorkoutJournalEntry], from index: Int, of definition: WorkoutDefinition) throws(WorkoutError) {
        try mapped { () throws(StoreError) in try store.appendToWorkoutJournal(entries, from: index, of: definition) }
    }

    public func storedDate(_ date: Date) -> Date { StoreTime.date(microseconds: StoreTime.microseconds(date)) }

    /// True: the store's committed samples are the workout's (see ``WorkoutStateStore``).
    public var recordsSamples: Bool { true }

    /// The store's records, its devices selected in SQL
    /// (``HealthStore/recordsForWorkout(of:endingFrom:devices:excluding:)``): exactly those the
    /// controller's filter keeps.
    public func committedRecords(
        of types: [QuantityType], endingFrom start: Date, devices: [String]?, excluding others: [String], person: String?
    ) throws(WorkoutError) -> [HealthRecord] {
        try mapped { () throws(StoreError) in
            try store.recordsForWorkout(
                of: types, endingFrom: start, devices: IdentitySelection(devices), excluding: others, person: person)
        }
    }

    public func handedOver(_ id: SampleID) throws(WorkoutError) {}

    /// Waits for the store's commits (``HealthStore/waitForCommit(after:orUntil:)``) until one
    /// holds the workout; false after `timeout` or when cancelled. The store is read once
    /// whatever the timeout, so a timeout of zero answers whether it holds the workout now.
    /// - Throws: ``WorkoutError/Code/persistence`` naming the store, the workout and the store's
    ///   error when the store cannot be read.
    public func waitUntilStored(_ id: SampleID, timeout: Duration) async throws(WorkoutError) -> Bool {
        let store = store
        let clock = clock
        do {
            if try await store.workout(id: id) != nil { return true }
            guard timeout > .zero else { return false }
            let outcome = try await race(sleep: { try await clock.sleep(for: timeout) }) { () async throws -> Bool in
                while true {
                    // The anchor before the look, so that a commit between the two is not missed.
                    let anchor = try await store.latestAnchor()
                    if try await store.workout(id: id) != nil { return true }
                    // Each second as well: a commit by another process is not signalled here.
                    try await store.waitForCommit(after: anchor) { try await clock.sleep(for: .seconds(1)) }
                }
            }
            if case .event(let stored) = outcome { return stored }
            return false
        } catch is CancellationError {
            return false
        } catch {
            let reason = (error as? StoreError)?.message ?? ErrorText.of(error)
            throw WorkoutError(
                .persistence, "cannot tell whether the workout store \(store.path) holds workout \(id): \(reason)", action: .end)
        }
    }

    public func participantAssignments() throws(WorkoutError) -> [ParticipantAssignment] {
        try mapped { () throws(StoreError) in try store.storedParticipantAssignments() }
    }

    public func assign(_ assignment: ParticipantAssignment, at date: Date) throws(WorkoutError) {
        try mapped { () throws(StoreError) in try store.storeParticipantAssignment(assignment, at: date) }
    }

    public func unassign(_ devices: [String], at date: Date) throws(WorkoutError) {
        try mapped { () throws(StoreError) in try store.removeParticipantAssignments(devices: devices, at: date) }
    }

    public var currentAttribution: ReadingAttribution? { store.currentAttribution }

    private func mapped<T>(_ body: () throws(StoreError) -> T) throws(WorkoutError) -> T {
        do {
            return try body()
        } catch {
            throw WorkoutError(.persistence, "the workout store \(store.path): \(error.message)")
        }
    }
}

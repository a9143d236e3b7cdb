public import FoundationEssentials
public import HealthModel
import Synchronization

/// A ``WorkoutStateStore`` in memory: what a gateway without a SQLite store uses (its workout in
/// progress does not survive a restart, and the log says so at start-up), and what unit tests
/// use. It sees no committed samples, so a workout's samples are the ones the controller
/// collected live.
public final class VolatileWorkoutStore: WorkoutStateStore, ParticipantAssignmentStore {
    private let workouts = Mutex<[JournaledWorkout]>([])
    private let assignments = Mutex<(current: [ParticipantAssignment], intervals: [WearInterval])>(([], []))

    /// An empty store.
    public init() {}

    /// The workouts kept, oldest first.
    public func journaledWorkouts() throws(WorkoutError) -> [JournaledWorkout] {
        workouts.withLock { $0 }
    }

    /// Appends `entries`; index 0 adds the workout.
    /// - Throws: ``WorkoutError/Code/persistence`` when `index` does not follow the last entry.
    public func append(_ entries: [WorkoutJournalEntry], from index: Int, of definition: WorkoutDefinition) throws(WorkoutError) {
        try workouts.withLock { workouts throws(WorkoutError) in
            if index == 0 {
                workouts.append(JournaledWorkout(definition: definition, entries: entries))
                return
            }
            guard let position = workouts.firstIndex(where: { $0.definition.id == definition.id }),
                workouts[position].entries.count == index
            else {
                throw WorkoutError(.persistence, "entry \(index) of workout \(definition.id) does not follow its journal")
            }
            workouts[position].entries += entries
        }
    }

    /// Unchanged: this store keeps dates as they are.
    public func storedDate(_ date: Date) -> Date { date }

    /// None: this store commits no samples.
    public func committedRecords(
        of types: [QuantityType], endingFrom start: Date, devices: [String]?, excluding others: [String], person: String?
    ) throws(WorkoutError) -> [HealthRecord] {
        []
    }

    /// Forgets the workout.
    public func handedOver(_ id: SampleID) throws(WorkoutError) {
        workouts.withLock { $0.removeAll { $0.definition.id == id } }
    }

    /// The assignments made, oldest first.
    public func participantAssignments() throws(WorkoutError) -> [ParticipantAssignment] {
        assignments.withLock { $0.current }
    }

    /// Keeps `assignment`, replacing the device's earlier one, whose interval ends at `date`.
    public func assign(_ assignment: ParticipantAssignment, at date: Date) throws(WorkoutError) {
        assignments.withLock { assignments in
            assignments.current.removeAll { $0.device == assignment.device }
            assignments.current.append(assignment)
            Self.end([assignment.device], at: date, in: &assignments.intervals)
            assignments.intervals.append(WearInterval(device: assignment.device, person: assignment.participant, start: date))
        }
    }

    /// Forgets the assignments of `devices`, their intervals ending at `date`.
    public func unassign(_ devices: [String], at date: Date) throws(WorkoutError) {
        assignments.withLock { assignments in
            assignments.current.removeAll { devices.contains($0.device) }
            Self.end(devices, at: date, in: &assignments.intervals)
        }
    }

    /// Every assignment's interval, oldest first.
    public func wearIntervals() -> [WearInterval] {
        assignments.withLock { $0.intervals }
    }

    /// Attribution by the assignments' intervals alone (nothing is committed here).
    public var currentAttribution: ReadingAttribution? {
        ReadingAttribution(rules: PersonAttribution(history: wearIntervals()))
    }

    /// Ends the intervals of `devices` that still hold.
    private static func end(_ devices: [String], at date: Date, in intervals: inout [WearInterval]) {
        for index in intervals.indices where intervals[index].end == nil && devices.contains(intervals[index].device) {
            intervals[index].end = date
        }
    }
}

import FoundationEssentials
import GatewayRuntime
import HealthModel
import Synchronization
import Workouts
import WorkoutRuntime

/// The group workout of `healthgate demo --participants N`: started for every participant when
/// the gateway starts, and ended when it stops gracefully, so that the demo leaves no workout
/// running in its store for a later run to restore.
///
/// Only the workouts it started are ended (by participant and workout ID): one a person started
/// through `healthgate workout start` stays theirs, and is restored by the next demo on the same
/// store like any workout in progress.
final class DemoWorkouts: Sendable {
    private let logger: Logger
    /// The workout started for each participant.
    private let started = Mutex<[String: SampleID]>([:])

    init(logger: Logger) {
        self.logger = logger
    }

    /// Starts a workout of `activity` for every participant; refusals are logged.
    func start(_ activity: WorkoutActivityType, in workouts: ParticipantWorkouts) async {
        do {
            let answer = try await workouts.handle(.start(activity: activity), for: .all)
            for error in answer.errors { logger.warning("group workout: \(error)") }
            started.withLock { started in
                for snapshot in answer.workouts {
                    guard let participant = snapshot.participant, let id = snapshot.workoutID else { continue }
                    started[participant] = id
                }
            }
        } catch {
            logger.error("cannot start the group workout: \(error)")
        }
    }

    /// Ends each workout ``start(_:in:)`` started that is still in progress; each is committed and
    /// handed to the bus before the gateway stops its sources, so the store keeps it. They end
    /// at once, as `workout end --all` ends a class: each end waits for the store to hold its
    /// workout (a commit, up to a second or two), and one after another the demo's eight took
    /// more than the gateway's 10 s for the work before stopping (the stop was then cut short).
    func end(in workouts: ParticipantWorkouts) async {
        let ending = started.withLock({ $0 }).filter { participant, id in
            guard let status = workouts.controller(for: participant)?.status() else { return false }
            return status.workoutID == id && status.state != .ended && status.state != .notStarted
        }
        let ended = await withTaskGroup(of: Bool.self) { group in
            for participant in ending.keys.sorted() {
                group.addTask {
                    do {
                        _ = try await workouts.handle(.end, for: .participant(participant))
                        return true
                    } catch {
                        self.logger.error("cannot end the demo workout of \(participant): \(error)")
                        return false
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        if ended > 0 { logger.info("ended the demo's group workout (\(ended) of \(started.withLock { $0.count }) still in progress)") }
    }
}

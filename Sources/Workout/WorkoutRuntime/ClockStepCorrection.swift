public import GatewayRuntime
public import HealthModel
public import HealthStore

/// What the gateway does after its wall clock stepped (``SampleBus/ClockWatch``'s `onStep`): the
/// store moves what was dated on the clock before the step onto it
/// (``HealthStore/correctClock(onto:)``), then every workout in progress is rebuilt from its
/// moved journal and samples, so that its duration, zone times and energy are measured on one
/// time line, as the monotonic clock measured them.
public struct ClockStepCorrection: Sendable {
    public let store: HealthStore
    public let workouts: ParticipantWorkouts
    public let logger: Logger
    /// The wall clock after the step.
    public let clock: any GatewayClock

    public init(store: HealthStore, workouts: ParticipantWorkouts, logger: Logger, clock: any GatewayClock) {
        self.store = store
        self.workouts = workouts
        self.logger = logger
        self.clock = clock
    }

    /// Moves everything onto `base` (and the log's dates written on `previous`, the base before
    /// the step); logs what moved, or why nothing could.
    public func callAsFunction(onto base: ClockBase, from previous: ClockBase? = nil) async {
        do {
            let moved = try await store.correctClock(onto: base, from: previous, now: clock.now())
            if moved.logEntries > 0 {
                logger.info("clock: moved the dates of the change log's commits and tombstones written before the step (\(String(count: moved.logEntries, "entry", plural: "entries")))")
            }
            guard !moved.isEmpty else { return }
            logger.notice(
                "clock: moved \(String(count: moved.records, "record")) and \(moved.journalEntries) workout journal "
                    + "entr\(moved.journalEntries == 1 ? "y" : "ies") dated before the step onto the stepped clock "
                    + "(metadata \(MetadataKey.clockCorrected))")
            await workouts.clockCorrected()
        } catch {
            logger.error("clock: cannot move the records dated before the step: \(error)")
        }
    }
}

import FoundationEssentials
import GatewayControl
import HealthModel
import HealthStore
import LinuxSystem
import GatewayRuntime
import SampleBus
import Workouts
import WorkoutRuntime

/// Built-in services the executable always runs beside the configured plugins, with the control
/// commands they answer. (Workouts plug in here.)
struct GatewayServices {
    var sources: [ConfiguredSource] = []
    var sinks: [ConfiguredSink] = []
    var controlHandlers: [String: ControlHandler] = [:]
    /// The workouts: the gateway's own and each participant's.
    let workouts: ParticipantWorkouts

    /// - Parameter store: the gateway's store; it keeps the workout in progress when a `sqlite`
    ///   sink commits the records into it (the workout's samples are read back from there).
    /// - Throws: ``ConfigurationError`` naming the `profile` or `participants` key when a profile
    ///   is wrong.
    init(
        configuration: GatewayConfiguration, store: HealthStore, paths: GatewayPaths, logger: Logger,
        clock: any GatewayClock, ids: SampleIDGenerator, clockBase: (@Sendable () -> ClockBase)? = nil
    ) throws(ConfigurationError) {
        // The workout controller is both a sink (it collects heart rate and steps from the bus)
        // and a source (it publishes finished workouts, so every store that takes workouts
        // stores them). The workout in progress lives in the SQLite store beside the samples it
        // covers, so a restart (or a crash) rebuilds it from what that store committed.
        let environment = PluginEnvironment(
            name: "workouts", logger: logger.child("workouts"), clock: clock, ids: ids, paths: paths, variables: [:])
        let journal: any WorkoutStateStore & ParticipantAssignmentStore
        if configuration.sinks.contains(where: { $0.kind == "sqlite" }) {
            journal = StoredWorkoutJournal(store: store, clock: clock)
        } else {
            environment.logger.notice(
                "no sqlite sink commits records into the store: a workout in progress is kept in memory and does not "
                    + "survive a restart")
            journal = VolatileWorkoutStore()
        }
        // The state file of releases that kept the workout beside the store; its workout, if
        // any, is not carried over.
        let oldStateFile = FileSystem.join(paths.statePath, "workout-session.json")
        if FileSystem.exists(oldStateFile) {
            environment.logger.warning(
                "ignoring \(oldStateFile), written by an older healthgate: workouts in progress live in the store now; delete the file")
        }
        let roster = try ConfigurationValidation.roster(of: configuration)
        let workouts = ParticipantWorkouts(
            roster: roster, store: journal, clock: clock, ids: ids, logger: environment.logger, clockBase: clockBase,
            storeWait: .seconds(configuration.storeWaitSeconds))
        self.workouts = workouts
        sinks.append(ConfiguredSink(name: "workouts", kind: "workouts", queue: QueueConfiguration(), sink: workouts))
        sources.append(ConfiguredSource(name: "workouts-publisher", kind: "workouts", source: workouts))
        controlHandlers.merge(workouts.controlHandlers()) { _, new in new }
    }
}

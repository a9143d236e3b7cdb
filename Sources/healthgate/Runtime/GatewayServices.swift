import Foundation
import GatewayControl
import HealthModel
import SampleBus
import Workouts

/// Built-in services the executable always runs beside the configured plugins, with the control
/// commands they answer. (Workouts plug in here.)
struct GatewayServices {
    var sources: [ConfiguredSource] = []
    var sinks: [ConfiguredSink] = []
    var controlHandlers: [String: ControlHandler] = [:]

    /// - Throws: ``ConfigurationError`` naming the `profile` key when the user profile is wrong.
    init(configuration: GatewayConfiguration, paths: GatewayPaths, logger: Logger, clock: any GatewayClock, ids: SampleIDGenerator) throws(ConfigurationError) {
        // The workout controller is both a sink (it collects heart rate and steps from the bus)
        // and a source (it publishes finished workouts, so every store that takes workouts
        // stores them). It restores an interrupted workout from the state directory.
        let environment = PluginEnvironment(
            name: "workouts", logger: logger.child("workouts"), clock: clock, ids: ids, paths: paths, variables: [:])
        let workouts: WorkoutController
        do {
            workouts = try WorkoutController(configuration: configuration, environment: environment)
        } catch {
            throw ConfigurationError(file: configuration.origin, keyPath: error.keyPath ?? "profile", reason: error.reason)
        }
        sinks.append(ConfiguredSink(name: "workouts", kind: "workouts", queue: QueueConfiguration(), sink: workouts))
        sources.append(ConfiguredSource(name: "workouts-publisher", kind: "workouts", source: workouts))
        controlHandlers.merge(workouts.controlHandlers()) { _, new in new }
    }
}

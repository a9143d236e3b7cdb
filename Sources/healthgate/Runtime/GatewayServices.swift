import Foundation
import GatewayControl
import HealthModel
import SampleBus

/// Built-in services the executable always runs beside the configured plugins, with the control
/// commands they answer. (Workouts plug in here.)
struct GatewayServices {
    var sources: [ConfiguredSource] = []
    var sinks: [ConfiguredSink] = []
    var controlHandlers: [String: ControlHandler] = [:]

    init(configuration: GatewayConfiguration, paths: GatewayPaths, logger: Logger, clock: any GatewayClock, ids: SampleIDGenerator) {
    }
}

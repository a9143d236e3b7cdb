import GatewayRuntime
import GatewayTesting
import HealthModel
import SampleBus

extension Gateway {
    /// A gateway as the executable wires the workouts: `source` and the workouts' publisher are
    /// its sources, the workouts and `sink` its sinks.
    static func feeding(
        _ workouts: any SampleSource & SampleSink, from source: ConfiguredSource, storingIn sink: ConfiguredSink,
        clock: ManualClock, logger: Logger, clockBase: (@Sendable () -> ClockBase)? = nil
    ) -> Gateway {
        Gateway(
            sources: [source, ConfiguredSource(name: "workouts-publisher", kind: "workouts", source: workouts)],
            sinks: [ConfiguredSink(name: "workouts", kind: "workouts", queue: QueueConfiguration(), sink: workouts), sink],
            clock: clock, logger: logger, clockBase: clockBase)
    }
}

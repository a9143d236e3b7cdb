import AsyncPrimitives
import GatewayRuntime
import SampleBus
import WorkoutRuntime

extension GatewayRunner {
    /// `--duration`: requests a graceful stop once `duration` seconds have passed.
    static func durationPart(_ duration: Double, stop: GatewayStop, _ facts: RunFacts) -> GatewayPart {
        let clock = facts.clock, logger = facts.logger, requests = stop.requests
        return GatewayPart(
            name: "--duration",
            work: {
                try await clock.sleep(for: .milliseconds(Int64(duration * 1000)))
                logger.info("--duration of \(duration) s reached: stopping")
                requests.requestStop()
            })
    }

    /// ``onStop``, once a stop is requested and before it reaches the bus, for at most the
    /// shutdown timeout; then the stop goes on. Nil without an `onStop`.
    func workBeforeStoppingPart(stop: GatewayStop, workouts: ParticipantWorkouts, _ facts: RunFacts) -> GatewayPart? {
        guard let onStop, stop.hasWorkBeforeStopping else { return nil }
        let requests = stop.requests, shutdown = stop.shutdown
        let clock = facts.clock, logger = facts.logger, timeout = facts.shutdownTimeout
        return GatewayPart(
            name: "the work before stopping",
            work: {
                await requests.wait(for: .stopping)
                // Cancelled: the gateway ended on its own. Forced: the gateway is already stopping.
                guard !Task.isCancelled, shutdown.stage == .running else { return }
                defer { shutdown.requestStop() }
                let outcome = try await race(sleep: { try await clock.sleep(for: timeout) }) { await onStop(workouts) }
                if case .timedOut = outcome { logger.warning("the work before stopping took longer than \(timeout); stopping") }
            })
    }
}

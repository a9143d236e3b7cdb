import AsyncPrimitives
import GatewayRuntime
import SampleBus

/// A source that stops after a while, as a strap that loses contact does: the demo's dropped
/// sensor (`healthgate demo --drop-sensor-after`). Returning is a source's normal end, so the
/// gateway keeps running without it.
struct SilencedSource: SampleSource {
    let source: any SampleSource
    let after: Duration
    let clock: any GatewayClock
    let logger: Logger

    func run(context: SourceContext) async throws {
        let source = source, clock = clock, after = after
        let outcome = try await race(sleep: { try await clock.sleep(for: after) }, event: { try await source.run(context: context) })
        if case .timedOut = outcome { logger.notice("the simulated sensor goes silent, as a strap that lost contact") }
    }
}

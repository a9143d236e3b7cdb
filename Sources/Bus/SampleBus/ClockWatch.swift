import FoundationEssentials
public import GatewayRuntime
public import GatewayTime
public import HealthModel

/// Watches the gateway's clock: logs its state when the gateway starts and once each time it
/// becomes trusted or untrusted, and every step of the wall clock with its size; after each step
/// (and once at the start, for steps while the gateway was not running) it hands the new
/// ``ClockBase`` to `onStep`, which moves what was dated on the old one (the store, the workouts
/// in progress). Re-reads every `interval` on the gateway's clock, which sleeps on a monotonic
/// clock.
public struct ClockWatch: Sendable {
    public let trust: any ClockTrust
    public let clock: any GatewayClock
    public let logger: Logger
    public var interval: Duration
    /// Called with the base now and the one before the step: at the start (with none), and
    /// after each step.
    public var onStep: @Sendable (ClockBase, ClockBase?) async -> Void

    public init(
        trust: any ClockTrust, clock: any GatewayClock, logger: Logger, interval: Duration = .seconds(5),
        onStep: @escaping @Sendable (ClockBase, ClockBase?) async -> Void = { _, _ in }
    ) {
        self.trust = trust
        self.clock = clock
        self.logger = logger
        self.interval = interval
        self.onStep = onStep
    }

    public func run() async throws {
        var last = trust.state()
        var base = trust.clockBase()
        report(last, first: true)
        await onStep(base, nil)
        while true {
            try await clock.sleep(for: interval)
            let now = trust.state()
            let current = trust.clockBase()
            if let step = current.seconds(from: base), step != 0 {
                logger.notice(String(cFormat: "clock: the wall clock stepped by %+.3f s", step) + " (now \(clock.now().formatted(.iso8601)))")
                let previous = base
                base = current
                if now.isTrusted != last.isTrusted { report(now, first: false) }
                last = now
                await onStep(current, previous)
                continue
            }
            if now.isTrusted != last.isTrusted { report(now, first: false) }
            last = now
        }
    }

    private func report(_ state: ClockState, first: Bool) {
        if state.isTrusted {
            logger.notice("clock: \(state)" + (first ? "" : "; from now on device clocks may be set to the gateway's time"))
        } else {
            logger.warning(
                "clock: \(state)" + (first ? " since boot" : "")
                    + ": no device's clock is set from it, and devices with clocks of their own keep their own times")
        }
    }
}

import GatewayRuntime
import SampleBus

/// How a stop reaches the gateway: the signals and `--duration` request it, a second request or
/// the deadline forces it, and ``ForcedExit`` ends the process when a forced stop does not end on
/// its own.
///
/// Made before the parts (the work before stopping and `--duration` need its signals), armed
/// before the first of them starts (``arm(deadline:notifications:cleanup:logger:)``: a signal
/// during start-up is a stop request like any other, carried out once the bus runs; the deadline
/// still bounds it), disarmed after they stopped.
struct GatewayStop: Sendable {
    /// What the bus runs on: ``Gateway/runReportingOutcome(shutdown:started:)``.
    let shutdown: ShutdownSignal
    /// What the signals and `--duration` request: `shutdown` itself, or, when there is work to
    /// do before stopping, a signal of its own that reaches `shutdown` once that work is done (or
    /// at once when forced).
    let requests: ShutdownSignal

    init(workBeforeStopping: Bool) {
        shutdown = ShutdownSignal()
        requests = workBeforeStopping ? ShutdownSignal() : shutdown
    }

    /// Whether a stop request waits for work before it reaches the bus.
    var hasWorkBeforeStopping: Bool { requests !== shutdown }

    /// What ``arm(deadline:notifications:cleanup:logger:)`` set up, to disarm.
    struct Armed {
        private let observations: [ShutdownSignal.Observation]
        private let forcedExit: ForcedExit
        private let signals: SignalWatcher

        fileprivate init(observations: [ShutdownSignal.Observation], forcedExit: ForcedExit, signals: SignalWatcher) {
            self.observations = observations
            self.forcedExit = forcedExit
            self.signals = signals
        }

        /// Disarms the forced exit only: the gateway ended without a forced stop, so the process
        /// exits through the normal path.
        func cancelForcedExit() {
            forcedExit.cancel()
        }

        /// Stops watching the signals, then disarms the forced exit and the forwarding, in the
        /// reverse of the order they were armed in.
        func disarm() {
            signals.cancel()
            forcedExit.cancel()
            for observation in observations.reversed() { observation.cancel() }
        }
    }

    /// Forwards a forced request to the bus, tells systemd when a stop begins (on the thread that
    /// requests it, however quickly the gateway then drains), arms the deadline and the forced
    /// exit (`cleanup` runs right before that exit), and only then watches the signals, so that
    /// no stop request can miss the forced exit.
    func arm(
        deadline: Duration, notifications: ServiceNotifications, cleanup: @escaping @Sendable () -> Void, logger: Logger
    ) -> Armed {
        let shutdown = shutdown
        let forwardForced = requests.onStage(.forced) { shutdown.force() }
        let tellStopping = requests.onStage(.stopping) { notifications.stopping() }
        let forcedExit = ForcedExit(shutdown: shutdown, deadline: deadline, cleanup: cleanup)
        let signals = SignalWatcher(shutdown: requests, logger: logger)
        return Armed(observations: [forwardForced, tellStopping], forcedExit: forcedExit, signals: signals)
    }
}

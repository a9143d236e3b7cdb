import AsyncPrimitives
import FoundationEssentials
import GatewayRuntime
import LinuxSystem
import SampleBus
import Synchronization

/// The gateway's side of systemd's `Type=notify` protocol (udev-rules/healthgate.service):
/// - `READY=1` once the store is open and the sinks and sources have started (``ready(_:)``);
/// - `WATCHDOG=1` every half of `$WATCHDOG_USEC` while the pipeline makes progress, as
///   ``PipelineWatchdog`` decides from the store writer's activity and the sinks' queues
///   (``runWatchdog(observe:)``); a stall withholds them, and systemd, hearing nothing for
///   `WatchdogSec=`, kills and restarts the gateway. The stall threshold is that same half, so
///   one setting, `WatchdogSec=`, decides both;
/// - `STOPPING=1` when a graceful stop begins (``stopping()``);
/// - `STATUS=` lines (shown by `systemctl status`) when it is ready, when the pings stop and
///   resume, and when it stops.
///
/// Without `$NOTIFY_SOCKET` (not under systemd) it sends nothing; without `$WATCHDOG_USEC` it
/// pings nothing. A notification that cannot be sent is logged once per kind of failure; the
/// gateway runs on. ``report`` is what `status` and `/metrics` show.
final class ServiceNotifications: Sendable {
    private let notifier: ServiceManagerNotifier?
    private let clock: any GatewayClock
    private let logger: Logger
    private let isReady = AsyncCondition(false)
    private let state: Mutex<State>

    private struct State {
        var report: WatchdogReport?
        var lastFailure: Errno?
    }

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID` from `variables`.
    init(variables: [String: String], clock: any GatewayClock, logger: Logger) {
        var notifier: ServiceManagerNotifier?
        do {
            notifier = try ServiceManagerNotifier.from(environment: variables)
        } catch {
            logger.warning("systemd notifications off: \(error)")
        }
        self.notifier = notifier
        self.clock = clock
        self.logger = logger
        let report = notifier?.watchdogTimeout.map { WatchdogReport(timeoutSeconds: $0.seconds) }
        state = Mutex(State(report: report))
    }

    /// The watchdog as `status` and `/metrics` show it; nil when systemd does not watch.
    var report: WatchdogReport? { state.withLock { $0.report } }

    /// The time between two checks (and pings): half the watchdog's timeout, as sd_notify(3)
    /// advises. Also the stall threshold.
    var interval: Duration? { notifier?.watchdogTimeout.map { $0 / 2 } }

    /// Sends `READY=1` with `status`, and lets the watchdog loop start.
    func ready(_ status: String) {
        send(["READY=1", "STATUS=\(status)"])
        isReady.set(true)
    }

    /// Sends `STOPPING=1`: systemd then waits for the exit (`TimeoutStopSec=`).
    func stopping() {
        send(["STOPPING=1", "STATUS=stopping: draining the sinks"])
    }

    /// From ``ready(_:)`` until cancelled, every ``interval``: observes the pipeline, lets
    /// ``PipelineWatchdog`` decide, and pings or withholds. Returns at once when systemd does not
    /// watch.
    func runWatchdog(observe: @escaping @Sendable () -> PipelineWatchdog.Observation) async throws {
        guard let interval else { return }
        try await isReady.wait { $0 }
        var watchdog = PipelineWatchdog(threshold: interval)
        var withheld: String?
        while true {
            let decision = watchdog.decide(observe(), at: clock.uptime())
            let now = clock.now()
            switch decision {
            case .ping:
                send(withheld == nil ? ["WATCHDOG=1"] : ["WATCHDOG=1", "STATUS=running"])
                if withheld != nil { logger.notice("watchdog pings resume: the pipeline moves again") }
                withheld = nil
                state.withLock { $0.report?.recordPing(at: now) }
            case .withhold(let reason):
                if withheld == nil {
                    logger.error("watchdog pings withheld, systemd restarts the gateway unless it moves again: \(reason)")
                    send(["STATUS=watchdog pings withheld: \(reason)"])
                }
                withheld = reason
                state.withLock { $0.report?.recordWithheld(reason, at: now) }
            }
            try await clock.sleep(for: interval)
        }
    }

    private func send(_ fields: [String]) {
        guard let notifier else { return }
        do {
            try notifier.send(fields)
            state.withLock { $0.lastFailure = nil }
        } catch {
            let isNew = state.withLock { state -> Bool in
                defer { state.lastFailure = error }
                return state.lastFailure != error
            }
            if isNew { logger.warning("cannot notify systemd at \(notifier.socket): \(error)") }
        }
    }
}

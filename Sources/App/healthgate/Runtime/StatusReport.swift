import FoundationEssentials
import HealthStore
import SampleBus

/// What `healthgate status` receives from the daemon.
struct StatusReport: Codable, Sendable {
    var version: String
    var pid: Int
    var startedAt: Date
    var configuration: String
    /// The store's file.
    var store: String?
    /// Whether the wall clock is synchronized (``ClockState``).
    var clock: String?
    var plugins: [PluginStatus]
    /// What the heart-rate arbiter did (``HeartRateArbiter/counts``): readings dropped as a
    /// second path's copy, handovers between paths. Absent from an older daemon.
    var heartRate: HeartRateArbiter.Counts?
    /// The store's background migration, a step each (empty when the store never had one to
    /// run); absent from an older daemon.
    var migration: [MigrationStep]?

    /// One step of the store's background migration (``StoreMigrationStep``) as `status` shows it.
    struct MigrationStep: Codable, Sendable {
        /// `heartbeats` or `workout_samples`.
        var step: String
        /// Rows handled, at most ``total``.
        var done: Int
        /// Rows the step had to handle when the upgrade began.
        var total: Int
        var finished: Bool
        var started: Date
        /// When it finished; absent while it runs.
        var finishedAt: Date?

        init(_ step: StoreMigrationStep) {
            self.step = step.name
            done = step.handled
            total = step.total
            finished = step.finished != nil
            started = step.started
            finishedAt = step.finished
        }
    }

    /// systemd's watchdog (``WatchdogReport``); absent when systemd does not watch the daemon
    /// (no `WatchdogSec=`, or not run by systemd) and from an older daemon.
    var watchdog: WatchdogReport?
}

import FoundationEssentials
import HealthModel
import HealthStore
import LinuxSystem
import SampleBus

/// What `healthgate status` receives from the daemon.
struct StatusReport: Codable, Sendable {
    /// How the previous run ended when it did not stop cleanly (``RunMarker``); absent after a
    /// clean stop, and from an older daemon.
    struct PreviousRun: Codable, Sendable {
        var pid: Int
        var startedAt: Date
        /// `crash` (a fatal signal left its mark) or `unclean` (no mark: SIGKILL, a power cut).
        var ended: String
        /// The fatal signal's name, for a crash.
        var signal: String?
        /// When the fatal signal arrived, for a crash.
        var crashedAt: Date?

        init(_ end: UncleanEnd) {
            pid = Int(end.pid)
            startedAt = Date(timeIntervalSince1970: Double(end.startedAt) / 1000)
            ended = end.crash == nil ? "unclean" : "crash"
            signal = end.crash?.signalName
            crashedAt = end.crash.map { Date(timeIntervalSince1970: Double($0.at) / 1000) }
        }

        /// `crashed (SIGSEGV) at …, pid 41, up since …` or `ended without a clean stop (…)`.
        var text: String {
            let since = "pid \(pid), up since \(RFC3339.string(from: startedAt))"
            if let signal, let crashedAt {
                return "crashed (\(signal)) at \(RFC3339.string(from: crashedAt)), \(since)"
            }
            return "ended without a clean stop (killed with SIGKILL, or the machine stopped), \(since)"
        }
    }

    var version: String
    var pid: Int
    var startedAt: Date
    var configuration: String
    /// The store's file.
    var store: String?
    /// The store's schema version, which the daemon migrated it to when it opened it
    /// (``StoreSchema/version``, `PRAGMA user_version`). Absent from an older daemon.
    var storeSchema: Int?
    /// Whether the wall clock is synchronized (``ClockState``).
    var clock: String?
    var plugins: [PluginStatus]
    /// What the heart-rate arbiter did (``HeartRateArbiter/counts``): readings dropped as a
    /// second path's copy, handovers between paths. Absent from an older daemon.
    var heartRate: HeartRateArbiter.Counts?
    /// Readings the store committed with a person and with nobody since the start, by reason,
    /// and an erased person's not stored (``HealthStore/attributionCounts``). Absent from an
    /// older daemon.
    var attribution: AttributionCounts?
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
    /// How the previous run ended, when it did not stop cleanly.
    var previousRun: PreviousRun?
    /// When the store stopped answering (a read or a write of it has not ended since, for longer
    /// than ``SampleBus/StoreFactsWatch/stuckAfter``); absent while it answers, and from an older
    /// daemon. Everything else in the report is what was last published: none of it waits on the
    /// store's disk.
    var storeStuckSince: Date?
}

import Dispatch
import FoundationEssentials
import LinuxSystem
import SampleBus
import Synchronization

/// Ends the process promptly once a stop is forced, whatever the tasks are doing.
///
/// A forced stop (a second signal, or `shutdownTimeoutSeconds` after the first) cancels every
/// task and interrupts blocked calls (``StopRequest/onForcedStop(_:)``), but a call that ignores
/// both (a busy-wait inside SQLite, a read on a descriptor nobody closes) would still hold the
/// process. So the forced stage also arms a timer on a queue of its own: after `grace` the socket
/// file is removed and the process exits with status 1, without logging, flushing or taking any
/// lock on the way, so that nothing can block it. A gateway that ends within `grace` exits
/// through the normal path first.
///
/// The shutdown deadline is armed here too, on the same queue, as a backstop to the gateway's own
/// watchdog task: it forces the stop even when no task can run.
struct ForcedExit {
    /// How long a forced stop may take to end on its own before the process exits.
    static let grace = Duration.milliseconds(200)
    /// How long after the gateway's deadline the backstop forces the stop (the watchdog task
    /// normally gets there first and says why).
    static let backstop = Duration.milliseconds(100)

    private let observations: [ShutdownSignal.Observation]
    private let cancelled: CancelFlag

    /// Set once the gateway has ended on its own; timers armed before then do nothing.
    private final class CancelFlag: Sendable {
        let value = Mutex(false)
    }

    /// Arms the deadline and the forced exit on `shutdown`. `cleanup` runs right before the exit;
    /// it must not block (removing a file is fine).
    init(shutdown: ShutdownSignal, deadline: Duration, cleanup: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "healthgate.forced-exit")
        let cancelled = CancelFlag()
        let exit = shutdown.onStage(.forced) {
            queue.asyncAfter(deadline: .now() + Self.dispatchInterval(Self.grace)) {
                guard !cancelled.value.withLock({ $0 }) else { return }
                cleanup()
                ProcessControl.exitImmediately(ExitCode.failure.rawValue)
            }
        }
        let deadline = shutdown.onStage(.stopping) {
            queue.asyncAfter(deadline: .now() + Self.dispatchInterval(deadline + Self.backstop)) {
                guard !cancelled.value.withLock({ $0 }) else { return }
                shutdown.force()
            }
        }
        observations = [exit, deadline]
        self.cancelled = cancelled
    }

    /// Disarms both timers: the gateway ended on its own, and the process exits through the
    /// normal path.
    func cancel() {
        cancelled.value.withLock { $0 = true }
        for observation in observations { observation.cancel() }
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        // Capped at a year, so that the multiplication cannot overflow for any timeout.
        let seconds = min(duration.components.seconds, 365 * 24 * 3600)
        return .milliseconds(Int(seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
    }
}

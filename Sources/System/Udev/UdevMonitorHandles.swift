import CUdev
import Synchronization

/// The udev context and monitor of one ``UdevMonitor``, released together (the monitor first)
/// with the last reference, which the monitor's readiness source drops once it is cancelled.
///
/// libudev objects are not thread-safe (libudev(3): "not thread-safe; use one context per
/// thread"): the pointers live in a `Mutex`, so every use is exclusive and the compiler checks
/// it. Only the monitor's serial queue uses them, so the lock is never contended.
final class UdevMonitorHandles: Sendable {
    /// One reference on each.
    struct Pointers {
        let udev: OpaquePointer
        let monitor: OpaquePointer
    }

    private let pointers: Mutex<Pointers>

    /// Takes over the references in `pointers`.
    init(_ pointers: sending Pointers) {
        self.pointers = Mutex(pointers)
    }

    deinit {
        pointers.withLock { pointers in
            udev_monitor_unref(pointers.monitor)
            udev_unref(pointers.udev)
        }
    }

    /// Runs `body` with the monitor, exclusively.
    func withMonitor(_ body: (OpaquePointer) -> Void) {
        pointers.withLock { body($0.monitor) }
    }
}

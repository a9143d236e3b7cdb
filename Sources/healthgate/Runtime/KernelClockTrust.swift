import FoundationEssentials
import GatewayRuntime
import LinuxSystem
import SampleBus

/// The kernel's word on the wall clock (adjtimex(2)); when the kernel cannot be asked,
/// systemd-timesyncd's flag file (`/run/systemd/timesync/synchronized`, which it creates once it
/// synchronised) as a hint. Never an assumption: no answer is "not synchronized".
struct KernelClockTrust: ClockTrust {
    var timesyncdFlag = "/run/systemd/timesync/synchronized"

    func state() -> ClockState {
        do {
            let kernel = try KernelClock.synchronization()
            return kernel.synchronized ? .synchronized(maximumErrorSeconds: Double(kernel.maximumErrorMicroseconds) / 1e6) : .unsynchronized
        } catch {
            return FileManager.default.fileExists(atPath: timesyncdFlag) ? .synchronized(maximumErrorSeconds: nil) : .unsynchronized
        }
    }

    /// The configuration's choice: declared trusted, else the kernel's.
    static func of(_ settings: ClockSettings) -> any ClockTrust {
        settings.trusted ? FixedClockTrust(.declaredTrusted) : KernelClockTrust()
    }
}

/// Logs the clock's state when the gateway starts and once each time it becomes trusted or
/// untrusted, and every step of the wall clock with its size (re-read every `interval` on the
/// gateway's clock, which sleeps on a monotonic clock).
struct ClockTrustWatch: Sendable {
    let trust: any ClockTrust
    let clock: any GatewayClock
    let logger: Logger
    /// The wall clock less a monotonic clock (seconds): changes only when the wall clock steps.
    var wallMinusMonotonic: @Sendable () -> Double = { KernelClock.wallMinusBoot() }
    var interval: Duration = .seconds(5)
    /// Smaller changes are the kernel slewing the clock, not a step.
    static let stepThreshold = 0.5

    func run() async throws {
        var last = trust.state()
        var base = wallMinusMonotonic()
        report(last, first: true)
        while true {
            try await clock.sleep(for: interval)
            let now = trust.state()
            let offset = wallMinusMonotonic()
            if abs(offset - base) > Self.stepThreshold {
                logger.notice(String(cFormat: "clock: the wall clock stepped by %+.3f s", offset - base) + " (now \(clock.now().formatted(.iso8601)))")
            }
            base = offset
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

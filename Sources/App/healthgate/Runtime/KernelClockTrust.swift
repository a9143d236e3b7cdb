import FoundationEssentials
import GatewayRuntime
import GatewayTime
import HealthModel
import LinuxSystem
import SampleBus

/// The kernel's word on the wall clock (adjtimex(2)); when the kernel cannot be asked,
/// systemd-timesyncd's flag file (`/run/systemd/timesync/synchronized`, which it creates once it
/// synchronised) as a hint. Never an assumption: no answer is "not synchronized". The clock base
/// is this boot's id and CLOCK_REALTIME − CLOCK_BOOTTIME.
struct KernelClockTrust: ClockTrust {
    var timesyncdFlag = "/run/systemd/timesync/synchronized"
    let base: ClockBaseReader

    func state() -> ClockState {
        do {
            let kernel = try KernelClock.synchronization()
            return kernel.synchronized ? .synchronized(maximumErrorSeconds: Double(kernel.maximumErrorMicroseconds) / 1e6) : .unsynchronized
        } catch {
            return FileSystem.exists(timesyncdFlag) ? .synchronized(maximumErrorSeconds: nil) : .unsynchronized
        }
    }

    func clockBase() -> ClockBase { base.current() }

    /// The configuration's choice of state (declared trusted, else the kernel's), on the kernel's
    /// clock base either way: a box with a real-time clock still has its clock stepped by hand.
    static func of(_ settings: ClockConfiguration) -> any ClockTrust {
        let base = ClockBaseReader(bootID: KernelClock.bootID(), wallMinusBootSeconds: { KernelClock.wallMinusBoot() })
        return settings.trusted
            ? FixedClockTrust(.declaredTrusted, reader: base) : KernelClockTrust(base: base)
    }
}

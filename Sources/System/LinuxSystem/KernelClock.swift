import CLinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says of the wall clock (adjtimex(2), read only): whether a time
/// synchronisation daemon (systemd-timesyncd, chrony, ntpd) has disciplined it, and the largest
/// error it admits. The kernel sets STA_UNSYNC at boot and when the maximum error grows past 16 s
/// without a correction; the daemon clears it when it synchronises.
public enum KernelClock {
    /// The synchronisation state now.
    public struct Synchronization: Sendable, Hashable {
        /// Whether the kernel's clock is synchronised (STA_UNSYNC clear, and adjtimex did not
        /// answer TIME_ERROR).
        public var synchronized: Bool
        /// The maximum error the kernel admits, in microseconds (`maxerror`).
        public var maximumErrorMicroseconds: Int
    }

    /// Reads the state with adjtimex(2) and `modes` 0, which changes nothing.
    /// - Throws: ``Errno`` when the call fails (it does not for a read, except under a seccomp
    ///   filter that forbids it).
    public static func synchronization() throws(Errno) -> Synchronization {
        var state = timex()
        state.modes = 0
        let result = adjtimex(&state)
        guard result != -1 else { throw Errno.lastError }
        let unsynchronized = state.status & Int32(STA_UNSYNC) != 0 || result == TIME_ERROR
        return Synchronization(synchronized: !unsynchronized, maximumErrorMicroseconds: Int(state.maxerror))
    }
}

extension KernelClock {
    /// The wall clock less the time since boot (CLOCK_REALTIME − CLOCK_BOOTTIME, in seconds): it
    /// moves only when the wall clock is stepped (or slewed), by the step, so two readings tell
    /// the size of every step between them. CLOCK_BOOTTIME counts suspended time too.
    public static func wallMinusBoot() -> Double {
        var wall = timespec()
        var boot = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_REALTIME, &wall)
        return Double(wall.tv_sec - boot.tv_sec) + Double(wall.tv_nsec - boot.tv_nsec) / 1e9
    }
}

extension KernelClock {
    /// This boot's id (`/proc/sys/kernel/random/boot_id`, a UUID the kernel draws at boot): times
    /// on CLOCK_BOOTTIME compare only within one boot. "unknown" where /proc is not mounted.
    public static func bootID() -> String {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return "unknown" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "unknown" }
        let bytes = buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }
        return bytes.isEmpty ? "unknown" : String(decoding: bytes, as: UTF8.self)
    }
}

import CCrashMark
import CLinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// How a run that did not stop cleanly ended, as the next run finds it (``RunMarker`` makes it;
/// nothing else needs to).
public struct UncleanEnd: Sendable, Hashable {
    /// A fatal signal's mark: which signal, and when it arrived.
    public struct Crash: Sendable, Hashable {
        /// The signal number (SIGSEGV, SIGILL, …).
        public var signal: Int32
        /// Milliseconds since the Unix epoch, by the wall clock of the crashed process.
        public var at: Int64

        /// The signal's name (`SIGSEGV`), or its number for one without a name here.
        public var signalName: String {
            switch signal {
            case SIGSEGV: "SIGSEGV"
            case SIGBUS: "SIGBUS"
            case SIGILL: "SIGILL"
            case SIGFPE: "SIGFPE"
            case SIGABRT: "SIGABRT"
            case SIGTRAP: "SIGTRAP"
            default: "signal \(signal)"
            }
        }
    }

    /// The process id of that run.
    public var pid: Int32
    /// When it started, in milliseconds since the Unix epoch.
    public var startedAt: Int64
    /// Its fatal signal, when one left its mark; nil after SIGKILL (the OOM killer, a watchdog's
    /// kill, `kill -9`) or a power cut, which leave none.
    public var crash: Crash?
}

/// A file that says a run is in progress, and, after a fatal signal, which and when: the next
/// run reads what the last one left there (``begin(path:pid:startedAt:)``), so that a daemon
/// restarted after a crash can say so.
///
/// The file holds one line `run <pid> <milliseconds>` written at the start; a fatal signal
/// appends `crashed <signal> <milliseconds>` from a handler in C (CCrashMark), which then hands
/// the signal to the handler that was installed before it (Swift's backtracer, or the default
/// action). A clean stop removes the file (``end()``). One marker per process: the handler is
/// process-wide.
public final class RunMarker: Sendable {
    /// The file.
    public let path: String
    private let descriptor: FileDescriptor

    private init(path: String, descriptor: FileDescriptor) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        // Before the descriptor's own deinit closes it, so that no handler writes to a number
        // closed and reused.
        hg_crash_mark_disarm()
    }

    /// Reads what the previous run left at `path` (nil when it stopped cleanly, or none ran),
    /// marks this run there and arms the fatal-signal handler.
    /// - Throws: ``Errno`` when the file cannot be written or the handler installed.
    public static func begin(path: String, pid: Int32, startedAt: Int64) throws(Errno) -> (RunMarker, UncleanEnd?) {
        let previous = (try? FileSystem.contents(of: path)).flatMap(parse)
        let raw = try Errno.retryingInterrupts {
            hg_open_mode(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        let descriptor = FileDescriptor(owning: raw)
        do {
            let line = Array("run \(pid) \(startedAt)\n".utf8)
            var written = 0
            while written < line.count { written += try descriptor.writeSome(line[written...]) }
            // On disk before anything can crash: a power cut must not hide that this run began.
            try Errno.retryingInterrupts { fsync(raw) }
            try Errno.retryingInterrupts { hg_crash_mark_arm(raw) }
        } catch {
            descriptor.close()
            throw error
        }
        return (RunMarker(path: path, descriptor: descriptor), previous)
    }

    /// A clean stop: disarms the handler and removes the file. Idempotent.
    public func end() {
        hg_crash_mark_disarm()
        guard !descriptor.isClosed else { return }
        descriptor.close()
        // Already gone is as good as removed; any other failure leaves a file the next run
        // reads as an unclean end, which is the safe side.
        try? FileSystem.remove(path)
    }

    /// The run a marker's text describes, nil for text that is no marker.
    static func parse(_ bytes: [UInt8]) -> UncleanEnd? {
        var run: UncleanEnd?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let first = Int64(fields[1]), let second = Int64(fields[2]) else { continue }
            switch fields[0] {
            case "run": run = UncleanEnd(pid: Int32(truncatingIfNeeded: first), startedAt: second)
            case "crashed": run?.crash = .init(signal: Int32(truncatingIfNeeded: first), at: second)
            default: continue
            }
        }
        return run
    }
}

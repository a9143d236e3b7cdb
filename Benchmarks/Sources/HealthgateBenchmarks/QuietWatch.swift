import Foundation

/// How much of the machine other work took while a benchmark measured: the cores that other
/// processes (and the hypervisor, as steal time) kept busy on average, from `/proc/stat`'s CPU
/// time less this process's own (getrusage), over the watched interval.
///
/// A ratio against a baseline taken seconds apart survives a steady load, but not a build that
/// starts beside one side (the query benchmark's sides once differed 2× between two runs under a
/// load average of 6). The load average cannot say this by itself: it trails by a minute, so it
/// counts the build `Benchmarks/run` has just made and this process's own thread, and it misses
/// a build that starts in the middle of a short run. Both are reported beside the check.
struct QuietWatch {
    private let busy: Double?
    private let own: Double
    private let start: ContinuousClock.Instant
    /// The 1-minute load average when the watch started.
    let loadBefore: Double?

    /// Starts watching now.
    init() {
        busy = Self.machineBusySeconds()
        own = Harness.cpuSeconds()
        start = .now
        loadBefore = Self.oneMinuteLoad()
    }

    /// The cores other work kept busy on average since the watch started; nil when `/proc/stat`
    /// cannot be read.
    func otherCores() -> Double? {
        guard let busy, let now = Self.machineBusySeconds() else { return nil }
        let wall = (ContinuousClock.now - start).benchmarkSeconds
        guard wall > 0 else { return nil }
        return max(0, (now - busy) - (Harness.cpuSeconds() - own)) / wall
    }

    /// CPU seconds the whole machine spent busy since boot: user, nice, system, irq, softirq
    /// and steal of `/proc/stat`'s `cpu` line (proc(5)), in clock ticks.
    static func machineBusySeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        // user nice system idle iowait irq softirq steal (guest time is counted in user).
        guard fields.count >= 8 else { return nil }
        let ticks = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The 1-minute load average, from `/proc/loadavg`.
    static func oneMinuteLoad() -> Double? {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.flatMap { Double($0) }
    }
}

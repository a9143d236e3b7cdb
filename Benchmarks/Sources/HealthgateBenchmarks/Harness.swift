import Foundation

/// Measurement helpers shared by every benchmark: timing, CPU time, machine facts and reporting.
///
/// Benchmarks print ratios against a baseline measured in the same run, because the machines are
/// shared and noisy: an absolute figure from one run says little, a ratio taken a few seconds apart
/// on the same machine says much more.
enum Harness {
    /// Seconds taken by `body`, the best of `repetitions` runs (the least disturbed one).
    static func bestTime(repetitions: Int = 3, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            try body()
            best = min(best, (ContinuousClock.now - start).benchmarkSeconds)
        }
        return best
    }

    /// The async version of ``bestTime(repetitions:_:)``.
    static func bestTime(repetitions: Int = 3, _ body: () async throws -> Void) async rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            try await body()
            best = min(best, (ContinuousClock.now - start).benchmarkSeconds)
        }
        return best
    }

    /// User plus system CPU seconds this process has used.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// Minor page faults this process has taken (getrusage `ru_minflt`): each a page the kernel
    /// had to map, most of them memory handed out fresh.
    static func minorFaults() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_minflt
    }

    /// CLOCK_MONOTONIC in seconds: the clock the emulators (other processes) stamp what they
    /// send with (Python's `time.monotonic()`).
    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The resident set size of a process in KiB, from /proc/PID/status (VmRSS).
    static func residentKiB(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// The bytes a process caused to be written to storage so far (`write_bytes` of
    /// /proc/PID/io: counted as it dirties pages of a file, the WAL's and the database's alike,
    /// whenever the kernel writes them back), and those it cancelled by truncating dirty pages
    /// (`cancelled_write_bytes`); nil when the file cannot be read.
    static func writtenBytes(pid: Int32) -> (written: Int, cancelled: Int)? {
        guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        var fields: [Substring: Int] = [:]
        for line in io.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) { fields[parts[0]] = value }
        }
        guard let written = fields["write_bytes"], let cancelled = fields["cancelled_write_bytes"] else { return nil }
        return (written, cancelled)
    }

    /// "2 cores (AMD EPYC …), 23.4 GiB, Linux 6.1.0".
    static func machineDescription() -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown CPU"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let totalKiB = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        var uts = utsname()
        uname(&uts)
        let release = withUnsafeBytes(of: &uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores (\(model)), "
            + String(format: "%.1f GiB", Double(totalKiB) / 1_048_576) + ", Linux \(release)"
    }

    /// The 1, 5 and 15 minute load averages from /proc/loadavg.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: ", ")
    }

    /// Formats a number with thousands separators: 165 432.
    static func format(_ value: Double, decimals: Int = 0) -> String {
        let text = String(format: "%.\(decimals)f", value)
        let parts = text.split(separator: ".", maxSplits: 1)
        var integer = String(parts[0])
        let negative = integer.hasPrefix("-")
        if negative { integer.removeFirst() }
        var grouped = ""
        for (index, character) in integer.reversed().enumerated() {
            if index > 0, index % 3 == 0 { grouped.append(" ") }
            grouped.append(character)
        }
        return (negative ? "-" : "") + String(grouped.reversed()) + (parts.count > 1 ? "." + parts[1] : "")
    }

}

/// A Markdown report: one section per benchmark, printed as it completes.
///
/// A benchmark states the load it asked for and the load it got (``load(_:asked:got:share:)``)
/// before it gives a verdict. A figure measured over a load the benchmark did not get says
/// nothing about the budget, so every verdict of that section reads "not valid" and the run
/// exits 1 (``loadsNotCarried``).
struct Report {
    private(set) var text = ""
    /// Every load check that failed in this run, as "section: what (asked, got)".
    private(set) var loadsNotCarried: [String] = []
    private var section = ""
    private var sectionCarriedItsLoad = true
    private var sectionWasQuiet = true

    mutating func section(_ title: String) {
        section = title
        sectionCarriedItsLoad = true
        sectionWasQuiet = true
        emit("\n### \(title)\n")
    }

    /// Checks that other work kept at most `limit` cores busy while the section measured
    /// (`watch` started before its timed regions), and says so with the 1-minute load average
    /// before and after. When it did not, or cannot be told, the section's verdicts read "not
    /// judged": the figures are printed, but say nothing about the budget.
    /// - Returns: whether the machine was quiet.
    @discardableResult
    mutating func quiet(_ watch: QuietWatch, limit: Double) -> Bool {
        let other = watch.otherCores()
        let loads = [watch.loadBefore, QuietWatch.oneMinuteLoad()].map { $0.map { String(format: "%.2f", $0) } ?? "?" }
        let figures = (other.map { String(format: "other work kept %.2f cores busy", $0) } ?? "other work unknown")
            + String(format: " (at most %.2f)", limit) + ", load average \(loads[0]) before and \(loads[1]) after"
        sectionWasQuiet = other.map { $0 <= limit } ?? false
        emit("Quiet: \(figures): " + (sectionWasQuiet ? "quiet." : "**NOT quiet**; this section's figures are not judged."))
        return sectionWasQuiet
    }

    /// Checks that the benchmark got at least `share` of the load it asked for, and says so.
    /// - Returns: whether it did.
    @discardableResult
    mutating func load(_ what: String, asked: Double, got: Double, share: Double = 0.95) -> Bool {
        let carried = got >= asked * share
        let figures = "asked for \(Harness.format(asked, decimals: asked < 10 ? 1 : 0)), "
            + "got \(Harness.format(got, decimals: got < 10 ? 1 : 0))"
            + (share < 1 ? String(format: " (at least %.0f %% needed)", share * 100) : "")
        if carried {
            emit("Load: \(what): \(figures): carried.")
        } else {
            sectionCarriedItsLoad = false
            loadsNotCarried.append("\(section): \(what) (\(figures))")
            emit("Load: \(what): \(figures): **NOT carried**; this section's figures are not valid.")
        }
        return carried
    }

    /// Whether a measured figure meets its budget: "met", "NOT met", "not valid" when the
    /// section did not get the load it asked for, or "not judged" when the machine was not
    /// quiet while it measured (``quiet(_:limit:)``).
    func verdict(_ met: Bool) -> String {
        guard sectionCarriedItsLoad else { return "**not valid** (load not carried)" }
        guard sectionWasQuiet else { return "**not judged** (the machine was not quiet)" }
        return met ? "met" : "**NOT met**"
    }

    mutating func line(_ line: String) {
        emit(line)
    }

    mutating func table(_ header: [String], _ rows: [[String]]) {
        emit("| " + header.joined(separator: " | ") + " |")
        emit("|" + header.map { _ in " --- |" }.joined())
        for row in rows { emit("| " + row.joined(separator: " | ") + " |") }
        emit("")
    }

    private mutating func emit(_ line: String) {
        // Unbuffered, so that a run piped into tee shows each line as it completes.
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        text += line + "\n"
    }
}

extension Duration {
    var benchmarkSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

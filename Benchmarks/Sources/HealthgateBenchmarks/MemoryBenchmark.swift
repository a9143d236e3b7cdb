import Foundation

/// Memory: the resident set of `healthgate run` built in release mode with the static Swift
/// standard library, against `rss-baseline` (a minimal Foundation program) built the same way,
/// measured in the same run. Then an accelerated soak: many simulated devices at a high
/// notification rate, sampling RSS over time.
enum MemoryBenchmark {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(staticDirectory: String, soakSeconds: Double, report: inout Report) async throws {
        report.section("Memory (release, --static-swift-stdlib)")
        let healthgate = try staticProgram("healthgate", in: staticDirectory)
        let baselineBinary = try staticProgram("rss-baseline", in: staticDirectory)
        let environment = try BenchmarkEnvironment(name: "memory")
        defer { environment.removeAll() }

        // Both programs start as a gateway does after boot: their files not in the page cache.
        // A file just copied is cached whole, and the kernel maps every cached page around each
        // one faulted in, so a warm start would count pages of code that never runs.
        for binary in [healthgate, baselineBinary] { try dropCachedPages(of: binary) }

        // The baseline.
        // Its file goes into a directory it makes below this benchmark's own.
        let baseline = try launch(
            baselineBinary, arguments: [], environment: environment, variables: ["TMPDIR": environment.directory.path])
        try await Task.sleep(for: .seconds(3))
        guard baseline.isRunning else {
            let log = (try? String(contentsOfFile: stderrLog(of: baselineBinary, in: environment), encoding: .utf8)) ?? ""
            throw Failure(description: "rss-baseline exited with status \(baseline.terminationStatus): \(log)")
        }
        let baselineKiB = Harness.residentKiB(pid: baseline.processIdentifier) ?? 0
        // SIGKILL: the child inherits this process's blocked signals, and it has nothing to flush.
        kill(baseline.processIdentifier, SIGKILL)
        baseline.waitUntilExit()

        // Idle: one demo heart-rate monitor at 1 Hz and the SQLite store.
        let idleConfig = try writeConfig(
            environment: environment, name: "idle", monitors: 1, footPods: 0, rate: 1)
        let idle = try launch(healthgate, arguments: ["run", "--config", idleConfig], environment: environment)
        var idleSamples: [Int] = []
        for _ in 0..<10 {
            try await Task.sleep(for: .seconds(1))
            guard idle.isRunning else { throw Failure(description: "healthgate run exited with status \(idle.terminationStatus)") }
            idleSamples.append(Harness.residentKiB(pid: idle.processIdentifier) ?? 0)
        }
        let networking = httpMachinery(pid: idle.processIdentifier)
        let split = residentSplit(pid: idle.processIdentifier, executable: healthgate)
        let idleStop = await stop(idle)
        let idleKiB = idleSamples.last ?? 0
        let idleMaxKiB = idleSamples.max() ?? 0
        report.line("Idle: `healthgate run` with one simulated HRM at 1 Hz (`ble-heart-rate`, transport simulated) and the `sqlite` sink, "
            + "RSS (VmRSS) sampled each second for 10 s; baseline `rss-baseline` after 3 s.")
        report.line("")
        report.table(["process", "RSS", "ratio to baseline"], [
            ["rss-baseline", mib(baselineKiB), "1.00×"],
            ["healthgate run (after 10 s)", mib(idleKiB), String(format: "%.2f×", Double(idleKiB) / Double(max(1, baselineKiB)))],
            ["healthgate run (max over 10 s)", mib(idleMaxKiB), String(format: "%.2f×", Double(idleMaxKiB) / Double(max(1, baselineKiB)))],
        ])
        report.line("Where the idle RSS is (after 10 s): anonymous \(mib(split.anonymous)) (heap, stacks, written data), "
            + "mapped from files \(mib(split.file)), of which the healthgate executable's code \(mib(split.text)) "
            + "and its other segments \(mib(split.executableData)).")
        report.line("libcurl or FoundationNetworking mapped in the idle process (/proc/PID/maps): "
            + (networking.mapped.isEmpty ? "no" : "**yes** (\(networking.mapped.sorted().joined(separator: ", ")))")
            + "; a libcurl or URLSession thread started: \(networking.threads ? "**yes**" : "no"). "
            + "(The `http-repository` sink loads libcurl.so.4 with dlopen when it starts, and this configuration has no "
            + "HTTP sink; FoundationNetworking is not linked at all.)")
        // One monitor at 1 Hz for the 10 s sampled: it must have connected and been stored, or the
        // figure is the RSS of a gateway that did nothing.
        report.load(
            "heart-rate samples stored by the idle run (1 monitor at 1 Hz, 10 s)", asked: 10,
            got: Double(try storeCount(environment.path("idle.sqlite"), heartRateSampleCount)), share: 0.7)
        report.line("Budget: idle RSS ≤ 15 MiB: \(mib(idleMaxKiB)), " + report.verdict(idleMaxKiB <= 15 * 1024) + ".")

        // The soak: 16 HRMs + 16 foot pods at 100 notifications/s each = 3 200 notifications/s,
        // i.e. one hour of 1 Hz traffic from 3 200 devices every hour, or one hour of a single
        // device every 1.1 s.
        let soakConfig = try writeConfig(environment: environment, name: "soak", monitors: 16, footPods: 16, rate: 100)
        let soak = try launch(healthgate, arguments: ["run", "--config", soakConfig], environment: environment)
        var series: [(Double, Int)] = []
        let t0 = ContinuousClock.now
        let cpuStart = childCPUSeconds(pid: soak.processIdentifier)
        let interval = max(1, soakSeconds / 18)
        while (ContinuousClock.now - t0).benchmarkSeconds < soakSeconds {
            try await Task.sleep(for: .seconds(interval))
            guard soak.isRunning else { throw Failure(description: "the soak's healthgate run exited with status \(soak.terminationStatus)") }
            series.append(((ContinuousClock.now - t0).benchmarkSeconds, Harness.residentKiB(pid: soak.processIdentifier) ?? 0))
        }
        let cpuUsed = childCPUSeconds(pid: soak.processIdentifier) - cpuStart
        let wall = (ContinuousClock.now - t0).benchmarkSeconds
        let soakStop = await stop(soak)
        let soakPath = environment.path("soak.sqlite")
        let stored = try storeCount(soakPath, storedReadingCount)
        report.line("")
        report.line(String(format: "Soak: 16 simulated HRMs + 16 foot pods at 100 notifications/s each (3 200/s; one device-hour of 1 Hz "
            + "traffic every 1.1 s) for %.0f s; %@ samples stored; the process used %.0f %% of one core.",
                           wall, Harness.format(Double(stored)), cpuUsed / wall * 100).replacingOccurrences(of: "%@", with: ""))
        report.line("")
        report.line("Graceful stop (SIGINT) of the idle run: \(idleStop); of the soak run: \(soakStop).")
        report.line("")
        report.line("RSS over time (s → MiB): " + series.map { String(format: "%.0f→%.1f", $0.0, Double($0.1) / 1024) }.joined(separator: ", "))
        // Growth: compare the mean of the second third with the mean of the last third, so one
        // SQLite cache fill or a heartbeat-series flush does not count as a trend.
        let third = max(1, series.count / 3)
        let middle = series.dropFirst(third).prefix(third).map(\.1)
        let last = series.suffix(third).map(\.1)
        let middleMean = Double(middle.reduce(0, +)) / Double(max(1, middle.count))
        let lastMean = Double(last.reduce(0, +)) / Double(max(1, last.count))
        let growth = (lastMean - middleMean) / 1024
        report.line("")
        report.load("devices stored by the soak", asked: 32, got: Double(try storeCount(soakPath, storedDeviceCount)), share: 1)
        report.load(
            "heart-rate samples stored per second by the soak (16 monitors at 100/s)", asked: 1600,
            got: Double(try storeCount(soakPath, heartRateSampleCount)) / wall, share: 0.9)
        report.line(String(format: "Growth, mean of the last third − mean of the middle third: %+.2f MiB. ", growth)
            + "Budget: no growth under steady load (threshold +1 MiB): " + report.verdict(growth <= 1.0) + ".")
    }

    /// Sends SIGINT and waits up to 15 s for a graceful exit, then SIGKILL. Says what happened.
    static func stop(_ process: Process) async -> String {
        let pid = process.processIdentifier
        kill(pid, SIGINT)
        let start = ContinuousClock.now
        while process.isRunning, ContinuousClock.now - start < .seconds(15) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        if process.isRunning {
            kill(pid, SIGKILL)
            process.waitUntilExit()
            return "**did not exit within 15 s; killed**"
        }
        return String(format: "exited with status %d after %.2f s", process.terminationStatus,
                      (ContinuousClock.now - start).benchmarkSeconds)
    }

    static func mib(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }

    static func launch(
        _ path: String, arguments: [String], environment: BenchmarkEnvironment, variables extra: [String: String] = [:]
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        for name in ["XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"] {
            variables[name] = environment.directory.path
        }
        process.environment = variables
        process.standardOutput = FileHandle.nullDevice
        // Created before it is opened: FileHandle(forWritingAtPath:) does not create files.
        let log = stderrLog(of: path, in: environment)
        if !FileManager.default.createFile(atPath: log, contents: nil) {
            FileHandle.standardError.write(Data("cannot create \(log); the child's stderr is discarded\n".utf8))
        }
        process.standardError = FileHandle(forWritingAtPath: log) ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Where ``launch(_:arguments:environment:variables:)`` sends the stderr of the program at `path`.
    static func stderrLog(of path: String, in environment: BenchmarkEnvironment) -> String {
        environment.path("stderr-\(URL(fileURLWithPath: path).lastPathComponent).log")
    }

    static func writeConfig(environment: BenchmarkEnvironment, name: String, monitors: Int, footPods: Int, rate: Double) throws -> String {
        let config = """
            {
              "sources": [{"kind": "ble-heart-rate", "name": "demo", "config": {
                "transport": "simulated", "maxDevices": \(monitors + footPods),
                "simulation": {"heartRateMonitors": \(monitors), "footPods": \(footPods), "notificationsPerSecond": \(rate)}}}],
              "sinks": [{"kind": "sqlite"}], "store": {"path": "\(environment.path("\(name).sqlite"))"},
              "logLevel": "warning",
              "controlSocket": "\(environment.path("\(name).sock"))"
            }
            """
        let path = environment.path("\(name).json")
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Asks the kernel to drop a file's pages from the page cache (posix_fadvise(2),
    /// POSIX_FADV_DONTNEED), so the next program started from it reads what it runs from disk.
    static func dropCachedPages(of path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let status = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        guard status == 0 else {
            throw Failure(description: "posix_fadvise(\(path), DONTNEED): \(String(cString: strerror(status)))")
        }
    }

    /// A process's resident set split as proc(5) reports it: RssAnon and RssFile from
    /// /proc/PID/status, and from /proc/PID/smaps the executable's code (its mapping with
    /// execute permission) and its other mappings. In KiB.
    static func residentSplit(pid: Int32, executable: String) -> (anonymous: Int, file: Int, text: Int, executableData: Int) {
        func kib(_ line: Substring) -> Int {
            Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        var anonymous = 0, file = 0, text = 0, executableData = 0
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") {
            if line.hasPrefix("RssAnon:") { anonymous = kib(line) }
            if line.hasPrefix("RssFile:") { file = kib(line) }
        }
        var smaps = ""
        if let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/smaps") {
            smaps = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
            try? handle.close()
        }
        // A mapping's header names its permissions and file; its "Rss:" line follows.
        var current: (executable: Bool, code: Bool)?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), fields.count >= 5, range.first?.isHexDigit == true {
                current = (fields.count > 5 && fields[5] == executable, fields[1].contains("x"))
            } else if line.hasPrefix("Rss:"), let mapping = current, mapping.executable {
                if mapping.code { text += kib(line) } else { executableData += kib(line) }
            }
        }
        return (anonymous, file, text, executableData)
    }

    /// The HTTP machinery in a process: the libcurl and FoundationNetworking files mapped into it
    /// (/proc/PID/maps, proc(5)), and whether a thread is named after libcurl or URLSession.
    /// libcurl is not linked (the HTTP sink dlopens it when it starts), so a mapping means an HTTP
    /// sink started.
    static func httpMachinery(pid: Int32) -> (mapped: Set<String>, threads: Bool) {
        // FileHandle, not String(contentsOfFile:): /proc files report size 0, and that reads only
        // their first page.
        var maps = ""
        if let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") {
            maps = String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self)
            try? file.close()
        }
        let mapped = Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init)
        }.filter { $0.contains("libcurl") || $0.contains("FoundationNetworking") })
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let threads = tasks.contains { task in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.lowercased().contains("urlsession") || name.lowercased().contains("curl")
        }
        return (mapped, threads)
    }

    /// User + system CPU seconds of a child process, from /proc/PID/stat (fields 14 and 15, in
    /// clock ticks; proc(5)).
    static func childCPUSeconds(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": field 3 is at index 0, so field 14 is at index 11.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

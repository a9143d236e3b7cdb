import Foundation

// healthgate-benchmarks: speed and memory budgets, each measured against a baseline in the same
// run. See Benchmarks/README.md. Run in release mode only.

/// The entry point: parses the benchmark names and options, runs them, prints the report.
@main
struct HealthgateBenchmarks {
    /// Every benchmark, in the order `all` runs them; `inAll` is false for those that build a
    /// large store first or run for minutes, which run only when named. `--help` lists them, and
    /// Benchmarks/check-results checks that RESULTS.md and the README have each.
    static let benchmarks: [(name: String, inAll: Bool)] = [
        ("ingest", true), ("adapter", true), ("decode", true), ("latency", true), ("memory", true), ("http", true), ("mqtt", true),
        ("board", true), ("ant-class", true), ("advertisements", true),
        ("query", false), ("class-day", false), ("class", false), ("class-end", false), ("migration", false),
        ("class-store", false),
    ]

    static func main() async throws {
        let names = benchmarks.map(\.name)
        let named = benchmarks.filter { !$0.inAll }.map(\.name)
        let usage = """
            usage: healthgate-benchmarks [all|\(names.joined(separator: "|"))]... [options]
              (all, the default, is every benchmark but \(named.joined(separator: ", ")): those build a
              large store first or run for minutes, and run only when named; see Benchmarks/README.md)
              --latency-seconds N   how long the end-to-end latency load runs (default 70)
              --soak-seconds N      how long the accelerated memory soak runs (default 90)
              --board-seconds N     how long each phase of the board benchmark runs (default 30)
              --ant-seconds N       how long each side of the ANT+ class benchmark is measured (default 30)
              --advertisement-seconds N  how long each phase of the advertisements benchmark runs (default 20)
              --class-seconds N     how long the class benchmark's measured class lasts (default 300)
              --class-store-seconds SHORT,LONG  the two demo classes of class-store (default 60,180)
              --static-dir DIR      where the statically linked healthgate and rss-baseline are
                                    (default .build/benchmarks; Benchmarks/run builds them)
              --markdown FILE       also write the Markdown report to FILE
              --cache-dir DIR       where query keeps its year and migration its class-week between runs
                                    (default .build/benchmarks)
              --query-calls N       how many times query asks for the newest sample (default 2000)
              --help                print this text
            query-profile --side store|sql [--query newest|average|steps|changes] [--query-calls N]: one
            query of the query benchmark on one side, for a profiler (the cached store must exist: run
            query once; default: the newest sample, 2000 calls)
            ingest-profile --side store|sql [--rows N]: one ingest at batches of 1000 on one side (the sink with
            its queue pre-filled, or the C loop), for a profiler
            """
        if CommandLine.arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
            print(usage)
            return
        }

        var selected: [String] = []
        var options: [String: String] = [:]
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            if argument.hasPrefix("--") {
                guard let value = arguments.popFirst() else {
                    FileHandle.standardError.write(Data("\(argument) needs a value\n\(usage)\n".utf8))
                    exit(64)
                }
                options[String(argument.dropFirst(2))] = value
            } else {
                selected.append(argument)
            }
        }
        if selected == ["query-profile"] {
            // One query alone, one side, for a profiler (perf, callgrind): --side store|sql.
            try await QueryBenchmark.profile(
                cacheDirectory: options["cache-dir"] ?? ".build/benchmarks", query: options["query"] ?? "newest",
                side: options["side"] ?? "store", calls: Int(options["query-calls"] ?? "") ?? 2000)
            return
        }
        if selected == ["ingest-profile"] {
            try await IngestBenchmark.profile(rows: Int(options["rows"] ?? "") ?? 50_000, side: options["side"] ?? "store")
            return
        }
        if selected.isEmpty || selected.contains("all") {
            selected = benchmarks.filter(\.inAll).map(\.name) + selected.filter(named.contains)
        }
        if let unknown = selected.first(where: { !names.contains($0) }) {
            FileHandle.standardError.write(Data("unknown benchmark \(unknown)\n\(usage)\n".utf8))
            exit(64)
        }

        var report = Report()
        report.line("## Benchmark run \(ISO8601DateFormatter().string(from: Date()))")
        report.line("")
        report.line("- Machine: \(Harness.machineDescription())")
        report.line("- Load before the run: \(Harness.loadAverage())")
        report.line("- Command: `\(CommandLine.arguments.joined(separator: " "))`")
        #if DEBUG
        report.line("- **WARNING: debug build; figures are meaningless. Use `-c release`.**")
        #endif

        do {
            for name in selected {
                switch name {
                case "decode": DecodeBenchmark.run(report: &report)
                case "ingest": try await IngestBenchmark.run(report: &report)
                case "adapter": try await AdapterBenchmark.run(report: &report)
                case "class-day": try await ClassDayBenchmark.run(report: &report)
                case "http": try await HTTPBenchmark.run(report: &report)
                case "mqtt": try await MQTTBenchmark.run(report: &report)
                case "latency":
                    try await LatencyBenchmark.run(
                        seconds: Double(options["latency-seconds"] ?? "") ?? 70, report: &report)
                case "memory":
                    try await MemoryBenchmark.run(
                        staticDirectory: options["static-dir"] ?? ".build/benchmarks",
                        soakSeconds: Double(options["soak-seconds"] ?? "") ?? 90, report: &report)
                case "query":
                    try await QueryBenchmark.run(
                        cacheDirectory: options["cache-dir"] ?? ".build/benchmarks",
                        calls: Int(options["query-calls"] ?? "") ?? 2000, report: &report)
                case "ant-class":
                    try await ANTClassBenchmark.run(seconds: Double(options["ant-seconds"] ?? "") ?? 30, report: &report)
                case "advertisements":
                    try await AdvertisementsBenchmark.run(
                        seconds: Double(options["advertisement-seconds"] ?? "") ?? 20, report: &report)
                case "class":
                    try await ClassBenchmark.run(
                        staticDirectory: options["static-dir"] ?? ".build/benchmarks",
                        classSeconds: Double(options["class-seconds"] ?? "") ?? 300, report: &report)
                case "migration":
                    try await MigrationBenchmark.run(cacheDirectory: options["cache-dir"] ?? ".build/benchmarks", report: &report)
                case "class-store":
                    let lengths = (options["class-store-seconds"] ?? "60,180").split(separator: ",").compactMap { Int($0) }
                    try await ClassStoreBenchmark.run(
                        staticDirectory: options["static-dir"] ?? ".build/benchmarks", short: lengths.first ?? 60,
                        long: lengths.count > 1 ? lengths[1] : 180, report: &report)
                case "class-end":
                    try await ClassEndBenchmark.run(staticDirectory: options["static-dir"] ?? ".build/benchmarks", report: &report)
                case "board":
                    try await BoardBenchmark.run(seconds: Double(options["board-seconds"] ?? "") ?? 30, report: &report)
                default: break
                }
            }
        } catch {
            report.line("\n**Benchmark failed: \(error)**")
            if let file = options["markdown"] {
                do {
                    try report.write(toFile: file)
                } catch {
                    FileHandle.standardError.write(Data("cannot write the report to \(file): \(error)\n".utf8))
                }
            }
            exit(1)
        }
        report.line("\n- Load after the run: \(Harness.loadAverage())")
        if !report.loadsNotCarried.isEmpty {
            report.line("\n**Not valid: \(report.loadsNotCarried.count) load(s) not carried:**")
            for load in report.loadsNotCarried { report.line("- \(load)") }
        }
        if let file = options["markdown"] {
            try report.write(toFile: file)
        }
        // A run that did not carry its load measured something else: fail, as a broken run does.
        if !report.loadsNotCarried.isEmpty { exit(1) }
    }
}

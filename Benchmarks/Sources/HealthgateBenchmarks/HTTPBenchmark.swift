import Foundation
import HTTPRepository
import GatewayRuntime
import HealthModel
import HealthStore
import RemoteSinkKit
import SampleBus

/// The HTTP sink following the store: a store holding 100 000 heart-rate samples (written before
/// the timed region) → ``HTTPRepositorySink`` (the follower reads the changes after its cursor,
/// commits each batch's range, builds the native body, gzips it, POSTs it with up to
/// `maxInFlight` requests outstanding, commits its cursor after each 200) → a threaded Python
/// server on 127.0.0.1 that reads each body and answers 200.
///
/// Baseline: a loop that does the same work from the same store, one request after another:
/// `HealthStore.changes(since:limit:)` for 1000 changes, the same native body (``PayloadBuilder``),
/// the same gzip (libdeflate), a POST through the same transport (``CurlTransport``), no cursor,
/// no range commits.
///
/// Timed region, measured: from starting the sink until its cursor committed in the store reaches
/// the store's latest anchor (polled every millisecond); a new follower name per run, so each
/// starts at anchor 0. The load is checked, not assumed: both sides must make the server count
/// exactly `count / batchSize` requests, and the sink's cursor must reach the latest anchor.
/// Then, not timed against a baseline, the sink against a server that answers each request after
/// 100 ms: the rate the requests in flight reach.
enum HTTPBenchmark {
    static let count = 100_000
    static let batchSize = 1000

    static func run(report: inout Report) async throws {
        report.section("HTTP sink following the store (native format, gzip, batches of 1000, 4 requests in flight)")
        report.line("Measured: `HTTPRepositorySink` (defaults: batchSize 1000, maxInFlight 4, gzip) following a store of "
            + "\(Harness.format(Double(count))) heart-rate samples from anchor 0 until its committed cursor reaches the latest "
            + "anchor: changes read, ranges committed, native bodies, libdeflate gzip, POSTs, cursor commits → a threaded Python "
            + "server on 127.0.0.1 that reads each body and answers 200. Baseline: one loop doing the same work from the same "
            + "store one request after another (`changes(since:limit: 1000)`, the same body and gzip, the same `CurlTransport`), "
            + "without range or cursor commits. Runs alternate baseline/measured; best of 3 each by wall time. CPU is this "
            + "process's (the server's is not counted).")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "http")
        defer { environment.removeAll() }
        let followed = try await FollowedStore(count: count, environment: environment)
        let server = try BenchmarkHTTPServer(directory: environment.directory)
        defer { server.stop() }
        let transport = CurlTransport()
        var bestBaseline = Double.infinity
        var bestMeasured = Double.infinity
        var bestBaselineCPU = Double.infinity
        var bestMeasuredCPU = Double.infinity
        var bodyBytes = 0
        for repetition in 0..<3 {
            var before = try await server.statistics(transport)
            let cpu0 = Harness.cpuSeconds()
            let t0 = ContinuousClock.now
            bodyBytes = try await baseline(store: followed.store, url: server.url, transport: transport)
            bestBaseline = min(bestBaseline, (ContinuousClock.now - t0).benchmarkSeconds)
            bestBaselineCPU = min(bestBaselineCPU, Harness.cpuSeconds() - cpu0)
            var after = try await server.statistics(transport)
            try expect(after.requests - before.requests, "baseline")

            before = after
            let cpu1 = Harness.cpuSeconds()
            let seconds = try await follow(followed, url: server.url, name: "http-\(repetition)", environment: environment)
            bestMeasured = min(bestMeasured, seconds)
            bestMeasuredCPU = min(bestMeasuredCPU, Harness.cpuSeconds() - cpu1)
            after = try await server.statistics(transport)
            try expect(after.requests - before.requests, "sink")
        }
        let baseRate = Double(count) / bestBaseline
        let rate = Double(count) / bestMeasured
        let cpuPerSample = bestMeasuredCPU / Double(count) * 1e6
        report.table(
            ["samples", "measured: sink (wall)", "baseline: same work, one request at a time", "ratio", "CPU per sample measured / baseline"],
            [[
                Harness.format(Double(count)), Harness.format(rate) + " samples/s", Harness.format(baseRate) + " samples/s",
                String(format: "**%.2f×**", rate / baseRate),
                String(format: "%.2f µs / %.2f µs", cpuPerSample, bestBaselineCPU / Double(count) * 1e6),
            ]])
        report.line("Bodies: \(Harness.format(Double(bodyBytes / (count / batchSize)))) bytes per gzip batch of \(batchSize).")

        // A repository that answers after 100 ms: only requests in flight side by side keep up.
        let slow = try BenchmarkHTTPServer(directory: environment.directory, delaySeconds: 0.1)
        defer { slow.stop() }
        let before = try await slow.statistics(transport)
        let slowSeconds = try await follow(followed, url: slow.url, name: "http-slow", environment: environment)
        let after = try await slow.statistics(transport)
        try expect(after.requests - before.requests, "sink (slow server)")
        let slowRate = Double(count) / slowSeconds
        report.line("Against a server that answers each request after 100 ms: " + Harness.format(slowRate) + " samples/s.")
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged by the sink: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line(String(format: "Budgets: ≥ 0.8× the loop: %.2f×, ", rate / baseRate) + report.verdict(rate / baseRate >= 0.8)
            + String(format: "; ≤ 2 µs of CPU per sample: %.2f µs, ", cpuPerSample) + report.verdict(cpuPerSample <= 2)
            + "; ≥ 20 000 samples/s against a 100 ms server: " + Harness.format(slowRate) + ", " + report.verdict(slowRate >= 20_000) + ".")
    }

    /// The server must have seen one request per batch: fewer is a run that did not carry the load.
    static func expect(_ requests: Int, _ side: String) throws {
        guard requests == count / batchSize else {
            throw HTTPBenchmarkFailure(description: "\(side): the server saw \(requests) requests, expected \(count / batchSize)")
        }
    }

    /// The baseline: read, encode, gzip and POST from the store, one request at a time. Returns
    /// the bytes sent.
    static func baseline(store: HealthStore, url: URL, transport: CurlTransport) async throws -> Int {
        let builder = PayloadBuilder(format: .native, patientReference: nil)
        let deflate = DeflateLibrary()
        var cursor: Int64 = 0
        var sent = 0
        while true {
            let page = try await store.changes(since: cursor, limit: batchSize)
            if page.added.isEmpty && page.deleted.isEmpty { break }
            let batch = FollowerBatch(
                after: cursor, through: page.anchor, changes: FollowedChange.changes(of: page), payloadIdentity: builder.identity)
            guard let body = try builder.body(for: batch),
                let gzip = body.withUnsafeBytes({ deflate.gzip($0) })
            else { throw HTTPBenchmarkFailure(description: "baseline: no body or no libdeflate") }
            let response = try await transport.send(HTTPRequest(
                url: url,
                headers: [("Content-Type", builder.contentType), ("Content-Encoding", "gzip"), ("Idempotency-Key", batch.key)],
                body: Data(gzip), timeout: 30))
            guard response.status == 200 else { throw HTTPBenchmarkFailure(description: "baseline: HTTP \(response.status)") }
            sent += gzip.count
            cursor = page.anchor
        }
        return sent
    }

    /// Runs the sink with its defaults (batches of ``batchSize``) against `url` as follower
    /// `name` until its committed cursor reaches the store's latest anchor; returns the seconds
    /// that took.
    static func follow(
        _ followed: FollowedStore, url: URL, name: String, environment: BenchmarkEnvironment
    ) async throws -> Double {
        var plugin = environment.plugin(name)
        plugin.store = followed.store
        let sink = try HTTPRepositorySink(
            settings: HTTPRepositoryConfiguration(url: url.absoluteString).with { $0.batchSize = batchSize }.validated(in: plugin),
            environment: plugin)
        return try await followed.follow(sink, kind: HTTPRepositorySink.kind, name: name, environment: environment).seconds
    }
}

struct HTTPBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

/// A threaded HTTP/1.1 server on 127.0.0.1 (Debian's python3) that reads each body and answers
/// 200 `{}`, after `delaySeconds` when given; `POST /stats` answers the number of POSTs and body
/// bytes seen so far, at once.
final class BenchmarkHTTPServer {
    let url: URL
    private let statsURL: URL
    private let process: Process

    static let script = """
        import sys, threading, time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        lock = threading.Lock()
        delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
        counts = [0, 0]
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The headers and the body go out in two writes; without TCP_NODELAY the second
            # waits for the client's delayed ACK (40 ms per request).
            disable_nagle_algorithm = True
            def log_message(self, *args):
                pass
            def answer(self, body):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/stats":
                    with lock:
                        text = "%d %d" % (counts[0], counts[1])
                    self.answer(text.encode())
                    return
                with lock:
                    counts[0] += 1
                    counts[1] += len(body)
                if delay > 0:
                    time.sleep(delay)
                self.answer(b"{}")
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    init(directory: URL, delaySeconds: Double = 0) throws {
        let file = directory.appendingPathComponent("server.py")
        try Self.script.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [file.path, String(delaySeconds)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        self.process = process
        // The first line is the port; reading blocks this thread briefly, before any timing.
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)),
            let url = URL(string: "http://127.0.0.1:\(port)/v1/samples"), let stats = URL(string: "http://127.0.0.1:\(port)/stats")
        else {
            process.terminate()
            throw HTTPBenchmarkFailure(description: "the benchmark server did not print its port (python3 missing?)")
        }
        self.url = url
        self.statsURL = stats
    }

    /// POSTs and body bytes the server has seen.
    func statistics(_ transport: any HTTPTransport) async throws -> (requests: Int, bytes: Int) {
        let response = try await transport.send(HTTPRequest(url: statsURL, headers: [], body: Data(), timeout: 10))
        let fields = String(decoding: response.body, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        guard fields.count == 2 else { throw HTTPBenchmarkFailure(description: "bad /stats answer") }
        return (fields[0], fields[1])
    }

    /// Kills the server. Not `waitUntilExit()`: from an async context it can wait for a run
    /// loop that never turns; Foundation's Process reaps the child itself.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
    }
}

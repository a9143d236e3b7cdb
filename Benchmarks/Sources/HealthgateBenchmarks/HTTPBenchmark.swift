import Foundation
import HTTPRepository
import HealthModel
import RemoteOutbox
import SampleBus

/// The HTTP sink: records published on the real ``SampleBus`` → the sink's queue →
/// ``HTTPRepositorySink`` (HealthJSON encoding, the SQLite outbox, the native body, gzip, the
/// Idempotency-Key) → POSTed to a server on 127.0.0.1, against a plain loop POSTing the same
/// batches pre-encoded and pre-compressed through the same transport.
///
/// The server is a threaded Python HTTP/1.1 server that reads each body and answers 200; it counts
/// requests and bytes so every run can be checked. Both sides use ``CurlTransport`` (the
/// sink's real transport) and send one request at a time, as the sink does, so the ratio shows
/// what the outbox and the encoding cost.
///
/// Timed region, measured: publishing pre-built chunks of 100 records (concurrently with the
/// sink) until the sink returns, which it does once the bus is finished and the outbox is empty
/// (every record acknowledged by a 200). Making the sink (opening and migrating its outbox file)
/// is outside. Baseline: the POST loop only; encoding and compressing the batches is outside.
enum HTTPBenchmark {
    static let batchSize = 500

    /// The default configuration (gzip), which the budget is about; then, reported without a
    /// budget, the same with `gzip: false` on both sides, which separates what compressing costs
    /// from what the outbox and the pipeline cost.
    static func run(report: inout Report) async throws {
        try await run(gzip: true, report: &report)
        try await run(gzip: false, report: &report)
    }

    static func run(gzip: Bool, report: inout Report) async throws {
        report.section(gzip ? "HTTP sink (native format, batches of 500)" : "HTTP sink without compression (gzip: false; not budgeted)")
        let count = 100_000
        let compression = gzip ? "gzip level 1" : "gzip: false"
        report.line("Measured: `SamplePublisher.publish` (chunks of 100 pre-built heart-rate samples, one device, no metadata) "
            + "→ SampleBus → sink queue (capacity 10 000, block) → `HTTPRepositorySink` (batchSize 500, \(compression), "
            + "outbox policy block): HealthJSON encoding, outbox commit, native body, \(gzip ? "gzip, " : "")POST, outbox delete → a threaded "
            + "Python server on 127.0.0.1 that reads each body and answers 200. Baseline: the same server, the same transport "
            + "(`CurlTransport`) and headers, POSTing the same \(count / batchSize) batches pre-encoded\(gzip ? " and pre-gzipped" : "") "
            + "one after another. Runs alternate baseline/measured; best of 3 each by wall time.")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "http")
        defer { environment.removeAll() }
        let server = try BenchmarkHTTPServer(directory: environment.directory)
        defer { server.stop() }

        let start = Date()
        let records = try BenchmarkSamples.heartRate(count: count, ids: SampleIDGenerator(), start: start)
        let chunks = BenchmarkSamples.chunks(records)

        // The baseline's requests, built as the sink builds them (outside the timed region).
        let encoder = HealthJSON.makeEncoder()
        let builder = PayloadBuilder(format: .native, patientReference: nil)
        let url = server.url
        let deflate = DeflateLibrary()
        var requests: [HTTPRequest] = []
        var rawBytes = 0
        var sentBytes = 0
        for first in stride(from: 0, to: records.count, by: batchSize) {
            let batch = records[first..<min(first + batchSize, records.count)]
            let entries = try batch.map { record in
                OutboxRecord(
                    id: record.id, kind: record.kind, payload: try StoredPayload.encode(record, encoder: encoder),
                    enqueuedAt: start)
            }
            let body = builder.body(for: entries)
            // Compressed as the sink compresses (libdeflate, or zlib without it), so both sides
            // send the same bytes.
            let sent = gzip ? try body.withUnsafeBytes { deflate.gzip($0) }.map { Data($0) } ?? Gzip.compress(body) : body
            rawBytes += body.count
            sentBytes += sent.count
            var headers = [
                ("Content-Type", builder.contentType), ("Accept", "application/json"), ("User-Agent", "healthgate/bench"),
                ("Idempotency-Key", PayloadBuilder.idempotencyKey(for: entries.map(\.id))),
            ]
            if gzip { headers.append(("Content-Encoding", "gzip")) }
            requests.append(HTTPRequest(url: url, headers: headers, body: sent, timeout: 30))
        }

        // How fast the encoding alone is (CPU time, one core), to tell whether it is the bottleneck.
        let encodeCPU0 = Harness.cpuSeconds()
        var encodedBytes = 0
        for record in records.prefix(20_000) {
            encodedBytes &+= try StoredPayload.encode(record, encoder: encoder).count
        }
        let encodeRate = 20_000 / (Harness.cpuSeconds() - encodeCPU0)
        blackHole(encodedBytes)

        let transport = CurlTransport()
        // One warm-up request each way, so that neither side pays for connecting first.
        _ = try await transport.send(requests[0])
        var bestBaseline = Double.infinity
        var bestMeasured = Double.infinity
        var bestBaselineCPU = Double.infinity
        var bestMeasuredCPU = Double.infinity
        for repetition in 0..<3 {
            var before = try await server.statistics(transport)
            let cpu0 = Harness.cpuSeconds()
            let t0 = ContinuousClock.now
            for request in requests {
                let response = try await transport.send(request)
                guard response.status == 200 else { throw HTTPBenchmarkFailure(description: "baseline: HTTP \(response.status)") }
            }
            bestBaseline = min(bestBaseline, (ContinuousClock.now - t0).benchmarkSeconds)
            bestBaselineCPU = min(bestBaselineCPU, Harness.cpuSeconds() - cpu0)
            var after = try await server.statistics(transport)
            guard after.requests - before.requests == requests.count else {
                throw HTTPBenchmarkFailure(description: "baseline: the server saw \(after.requests - before.requests) requests, expected \(requests.count)")
            }

            before = after
            let sink = try HTTPRepositorySink(
                configuration: HTTPRepositoryConfiguration(url: url.absoluteString, gzip: gzip),
                environment: environment.plugin("http-\(repetition)"), transport: transport, random: { 0.5 })
            let cpu1 = Harness.cpuSeconds()
            let t1 = ContinuousClock.now
            try await measured(sink: sink, chunks: chunks, environment: environment)
            bestMeasured = min(bestMeasured, (ContinuousClock.now - t1).benchmarkSeconds)
            bestMeasuredCPU = min(bestMeasuredCPU, Harness.cpuSeconds() - cpu1)
            after = try await server.statistics(transport)
            let remaining = sink.outbox.statistics.count
            guard remaining == 0, after.requests - before.requests == requests.count,
                after.bytes - before.bytes >= sentBytes * 9 / 10
            else {
                throw HTTPBenchmarkFailure(
                    description: "sink: \(remaining) records left in the outbox, \(after.requests - before.requests) requests "
                        + "(expected \(requests.count)), \(after.bytes - before.bytes) bytes (baseline \(sentBytes))")
            }
        }
        // Two more floors, to tell where the sink's time goes: the same sink with a transport that
        // answers 200 at once (bus, encoding, compression and the outbox, no network), and the
        // batches' encoding and compression alone, one task per batch on every core (what any
        // sink that sends these bodies must do before its first POST).
        var bestAnswering = Double.infinity
        for repetition in 0..<3 {
            let sink = try HTTPRepositorySink(
                configuration: HTTPRepositoryConfiguration(url: url.absoluteString, gzip: gzip),
                environment: environment.plugin("answering-\(repetition)"), transport: AnsweringTransport(), random: { 0.5 })
            let t3 = ContinuousClock.now
            try await measured(sink: sink, chunks: chunks, environment: environment)
            bestAnswering = min(bestAnswering, (ContinuousClock.now - t3).benchmarkSeconds)
        }
        let batchEncoder = BatchEncoder(builder: builder, gzip: gzip, deflate: deflate)
        var bestEncoding = Double.infinity
        var bestEncodingCPU = Double.infinity
        for _ in 0..<3 {
            let t4 = ContinuousClock.now
            let cpu4 = Harness.cpuSeconds()
            let bytes = await encodeAlone(records, encoder: batchEncoder, enqueuedAt: start)
            bestEncoding = min(bestEncoding, (ContinuousClock.now - t4).benchmarkSeconds)
            bestEncodingCPU = min(bestEncodingCPU, Harness.cpuSeconds() - cpu4)
            guard bytes == sentBytes else {
                throw HTTPBenchmarkFailure(description: "encoding alone made \(bytes) bytes of bodies, the baseline sends \(sentBytes)")
            }
        }
        // The floor the bus sets: the same publishing into a consumer that takes batches of 500
        // and does nothing with them (no encoding, no outbox, no POST).
        var bestBus = Double.infinity
        for _ in 0..<3 {
            let t2 = ContinuousClock.now
            await busAlone(chunks: chunks)
            bestBus = min(bestBus, (ContinuousClock.now - t2).benchmarkSeconds)
        }
        let baseRate = Double(count) / bestBaseline
        let rate = Double(count) / bestMeasured
        report.table(
            ["samples", "measured: sink (wall)", "baseline: POST loop (wall)", "ratio", "CPU per sample measured / baseline"],
            [[
                Harness.format(Double(count)), Harness.format(rate) + " samples/s", Harness.format(baseRate) + " samples/s",
                String(format: "**%.2f×**", rate / baseRate),
                String(format: "%.1f µs / %.1f µs", bestMeasuredCPU / Double(count) * 1e6, bestBaselineCPU / Double(count) * 1e6),
            ]])
        let compressor = (try? deflate.load()) == nil ? "zlib" : "libdeflate"
        report.line("Bodies: \(Harness.format(Double(rawBytes / requests.count))) bytes per batch of \(batchSize) before gzip, "
            + (gzip ? "\(Harness.format(Double(sentBytes / requests.count))) after (\(compressor), level 1)" : "sent as they are")
            + ". JSONEncoder alone (`PayloadBuilder.storedPayload(of:encoder:)`, the "
            + "path before the hand-written writer, CPU time): " + Harness.format(encodeRate) + " samples/s.")
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged by the sink: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line("The sink with a transport that answers 200 at once (the bus, encoding, compression and the outbox; no network): "
            + Harness.format(Double(count) / bestAnswering) + " samples/s, "
            + String(format: "%.2f× the POST loop.", Double(count) / bestAnswering / baseRate))
        report.line("Encoding\(gzip ? " and compressing" : "") the \(requests.count) bodies alone, one task per batch on every core "
            + "(no bus, no outbox, no network): " + Harness.format(Double(count) / bestEncoding) + " samples/s, "
            + String(format: "%.2f× the POST loop, %.1f µs of CPU per sample", Double(count) / bestEncoding / baseRate,
                bestEncodingCPU / Double(count) * 1e6)
            + ": the most a sink that sends these bodies could reach here before it sends anything.")
        report.line("The bus alone (the same publishing into a consumer that takes batches of 500 and drops them): "
            + Harness.format(Double(count) / bestBus) + " samples/s, "
            + String(format: "%.2f× the POST loop: the most the sink can reach on this machine.", Double(count) / bestBus / baseRate))
        if gzip {
            report.line(String(format: "Budget: the HTTP sink ≥ 0.5× the plain POST loop: %.2f×, ", rate / baseRate)
                + Harness.verdict(rate / baseRate >= 0.5) + ".")
        } else {
            report.line(String(format: "Not budgeted (gzip: false on both sides): %.2f× the plain POST loop.", rate / baseRate))
        }
    }

    /// The bodies of `records` in batches of ``batchSize``, encoded as the sink's intake encodes
    /// them (the hand-written writer, then `encoder`'s body and compression), one child task per
    /// batch; returns the bytes made.
    static func encodeAlone(_ records: [HealthRecord], encoder: BatchEncoder, enqueuedAt: Date) async -> Int {
        await withTaskGroup(of: Int.self) { group in
            for first in stride(from: 0, to: records.count, by: batchSize) {
                let batch = Array(records[first..<min(first + batchSize, records.count)])
                group.addTask {
                    let json = HealthJSON.makeEncoder()
                    var writer = QuantitySampleJSONWriter()
                    let stored = batch.compactMap { record in
                        (try? StoredPayload.encode(record, encoder: json, writer: &writer)).map {
                            OutboxRecord(id: record.id, kind: record.kind, payload: $0, enqueuedAt: enqueuedAt)
                        }
                    }
                    return encoder.body(for: stored).bytes.count
                }
            }
            var total = 0
            for await bytes in group { total += bytes }
            return total
        }
    }

    /// Publishing on a bus whose only consumer takes batches of 500 and acknowledges them.
    static func busAlone(chunks: [[HealthRecord]]) async {
        let board = StatusBoard()
        let status = board.register(name: "drain", kind: "bench", role: .sink)
        let bus = SampleBus(sinks: [("drain", QueueConfiguration(capacity: 10_000, policy: .block), { _ in true }, status)])
        let inbox = bus.subscriptions[0].inbox
        let publisher = SamplePublisher(bus: bus, status: board.register(name: "source", kind: "bench", role: .source))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var taken = 0
                while let batch = await inbox.next(maxCount: batchSize) { taken &+= batch.count }
                blackHole(taken)
            }
            group.addTask {
                for chunk in chunks { await publisher.publish(chunk) }
                bus.finish()
            }
        }
    }

    /// The real path: publish on a bus while the sink delivers; returns when every record was
    /// acknowledged by the server.
    static func measured(sink: HTTPRepositorySink, chunks: [[HealthRecord]], environment: BenchmarkEnvironment) async throws {
        let board = StatusBoard()
        let status = board.register(name: "http", kind: HTTPRepositorySink.kind, role: .sink)
        let bus = SampleBus(sinks: [("http", QueueConfiguration(capacity: 10_000, policy: .block), { sink.accepts($0) }, status)])
        let inbox = bus.subscriptions[0].inbox
        let publisher = SamplePublisher(bus: bus, status: board.register(name: "source", kind: "bench", role: .source))
        let context = SinkContext(logger: environment.logger, clock: environment.clock, status: status)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sink.run(inbox: inbox, context: context) }
            group.addTask {
                for chunk in chunks { await publisher.publish(chunk) }
                bus.finish()
            }
            try await group.waitForAll()
        }
    }
}

/// Answers every request with 200 at once: the sink's work without the network.
struct AnsweringTransport: HTTPTransport {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse(status: 200) }
}

struct HTTPBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

/// A threaded HTTP/1.1 server on 127.0.0.1 (Debian's python3) that reads each body and answers
/// 200 `{}`; `POST /stats` answers the number of POSTs and body bytes seen so far.
final class BenchmarkHTTPServer {
    let url: URL
    private let statsURL: URL
    private let process: Process

    static let script = """
        import sys, threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        lock = threading.Lock()
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
                self.answer(b"{}")
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    init(directory: URL) throws {
        let file = directory.appendingPathComponent("server.py")
        try Self.script.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [file.path]
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

public import Foundation
import Glibc
import XCTest

/// The Python recording repository (plugins/HTTPRepository/Fixtures/recording_server.py)
/// on 127.0.0.1, run by a test: it records every request and answers what the test tells it.
public final class RecordingServer: @unchecked Sendable {
    // Touched only from the test's own task.
    /// The JSON-lines file of the recorded requests (kept across restarts).
    public let recording: URL
    public private(set) var port: Int = 0
    private var process: Process?

    /// The package's root directory.
    public static let packageRoot = HealthgateExecutable.packageRoot()
    /// The HTTP sink's test fixtures (the server and the payload validators).
    public static let fixtures = packageRoot.appendingPathComponent("plugins/HTTPRepository/Fixtures")

    /// A PEM certificate and key to serve HTTPS with; nil serves plain HTTP.
    let tls: (certificate: URL, key: URL)?

    public init(directory: URL, tls: (certificate: URL, key: URL)? = nil) {
        recording = directory.appendingPathComponent("requests.jsonl")
        self.tls = tls
    }

    public var url: String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)/samples" }

    /// A plain-HTTP server recording into `directory`, started (``start()``); the caller stops it.
    public static func started(in directory: URL) throws -> RecordingServer {
        let server = RecordingServer(directory: directory)
        try server.start()
        return server
    }

    /// Starts the server (on its previous port after ``stop()``); returns once it listens.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        var arguments = [Self.fixtures.appendingPathComponent("recording_server.py").path, "--record", recording.path]
        if port != 0 { arguments += ["--port", String(port)] }
        if let tls { arguments += ["--tls-cert", tls.certificate.path, "--tls-key", tls.key.path] }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        self.process = process
        // The server prints its port once it listens: reading that line is the readiness check.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw ServerError(message: "recording server exited before listening") }
            line.append(chunk)
        }
        guard let value = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ServerError(message: "recording server printed no port")
        }
        port = value
    }

    /// Kills the server: the port then refuses connections (an outage).
    public func stop() {
        guard let process else { return }
        // SIGKILL: the test process may pass SIGTERM on as ignored (SIG_IGN survives exec), and an
        // outage must be immediate anyway.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    deinit { stop() }

    /// Sends a control command (see the fixture's documentation): one HTTP/1.1 POST over a plain
    /// socket, so that the helper needs no HTTP client of the code under test.
    public func control(_ json: String) async throws {
        let body = Array(json.utf8)
        let head = "POST /_control HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard let descriptor = loopbackConnection(port: port) else {
            throw ServerError(message: "cannot connect to the recording server on \(port)")
        }
        defer { close(descriptor) }
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard written > 0 else { throw ServerError(message: "cannot send the control command") }
            sent += written
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        let status = String(decoding: answer.prefix(16), as: UTF8.self)
        XCTAssertTrue(status.hasPrefix("HTTP/1.1 200") || status.hasPrefix("HTTP/1.0 200"), status)
    }

    /// One recorded request.
    public struct Request {
        public var method: String
        public var path: String
        public var status: Int
        public var headers: [String: String]
        public var uuids: [String]
        /// The decompressed body, parsed when it is JSON.
        public var body: Any
        public var compressedBytes: Int
        /// When the server read the request (seconds since 1970, the server's clock).
        public var received: Double
        /// The Retry-After the server answered with, if any.
        public var retryAfter: String?
        /// The digest of its Content-Type, Content-Encoding and decoded body: what a repository
        /// following the IETF Idempotency-Key draft keeps under the key.
        public var fingerprint: String

        /// The records of a native body (samples, quantity and heartbeat series, correlations,
        /// workouts), each as its HealthJSON object.
        public var records: [[String: Any]] {
            guard let body = body as? [String: Any] else { return [] }
            return ["samples", "quantitySeries", "heartbeatSeries", "correlations", "workouts"].flatMap {
                body[$0] as? [[String: Any]] ?? []
            }
        }

        /// The uuids (lower case) of the records of a native body, not those of its deletions.
        public var recordUUIDs: [String] {
            records.compactMap { ($0["uuid"] as? String)?.lowercased() }
        }
    }

    /// Every recorded request so far.
    public func requests() -> [Request] {
        guard let text = try? String(contentsOf: recording, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Request(
                method: object["method"] as? String ?? "", path: object["path"] as? String ?? "",
                status: object["status"] as? Int ?? 0, headers: object["headers"] as? [String: String] ?? [:],
                uuids: object["uuids"] as? [String] ?? [], body: object["body"] ?? NSNull(),
                compressedBytes: object["compressedBytes"] as? Int ?? 0, received: object["received"] as? Double ?? 0,
                retryAfter: object["retryAfter"] as? String, fingerprint: object["fingerprint"] as? String ?? "")
        }
    }

    /// uuids the repository accepted (2xx), with the Idempotency-Keys they were accepted under.
    /// A repository that de-duplicates by key stores a uuid once when this set has one key.
    public func acceptedKeys() -> [String: Set<String>] {
        var keys: [String: Set<String>] = [:]
        for request in requests() where request.method == "POST" && (200..<300).contains(request.status) {
            for uuid in request.uuids { keys[uuid, default: []].insert(request.headers["Idempotency-Key"] ?? "") }
        }
        return keys
    }

    /// uuids the repository accepted in a POST (2xx), with how often each was accepted.
    public func acceptedCounts() -> [String: Int] {
        /// What this needs of a recorded line: decoding it alone leaves the body unmade, which
        /// keeps a log of tens of megabytes quick to read.
        struct Line: Decodable {
            var method: String
            var status: Int
            var uuids: [String]
        }
        guard let text = try? String(contentsOf: recording, encoding: .utf8) else { return [:] }
        let decoder = JSONDecoder()
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let request = try? decoder.decode(Line.self, from: Data(line.utf8)),
                request.method == "POST", (200..<300).contains(request.status)
            else { continue }
            for uuid in request.uuids { counts[uuid, default: 0] += 1 }
        }
        return counts
    }

    /// The uuids of the quantity samples of native bodies the repository accepted (2xx), with how
    /// often each was accepted. (A heartbeat series is sent once per version, under one uuid.)
    public func acceptedSampleCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for request in requests() where request.method == "POST" && (200..<300).contains(request.status) {
            let samples = (request.body as? [String: Any])?["samples"] as? [[String: Any]] ?? []
            for sample in samples {
                if let uuid = sample["uuid"] as? String { counts[uuid, default: 0] += 1 }
            }
        }
        return counts
    }

    public struct ServerError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}

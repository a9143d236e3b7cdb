import Foundation
import HTTPRepository
import XCTest

/// The Python recording repository (Fixtures/recording_server.py) on 127.0.0.1, run by a test.
final class RecordingServer: @unchecked Sendable {
    // Touched only from the test's own task.
    let recording: URL
    private(set) var port: Int = 0
    private var process: Process?

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A PEM certificate and key to serve HTTPS with; nil serves plain HTTP.
    let tls: (certificate: URL, key: URL)?

    init(directory: URL, tls: (certificate: URL, key: URL)? = nil) {
        recording = directory.appendingPathComponent("requests.jsonl")
        self.tls = tls
    }

    var url: String { "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)/samples" }

    /// Starts the server (on its previous port after ``stop()``); returns once it listens.
    func start() throws {
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
    func stop() {
        guard let process else { return }
        // SIGKILL: the test process may pass SIGTERM on as ignored (SIG_IGN survives exec), and an
        // outage must be immediate anyway.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    deinit { stop() }

    /// Sends a control command (see the fixture's documentation).
    func control(_ json: String) async throws {
        let response = try await CurlTransport().send(HTTPRequest(
            url: URL(string: "http://127.0.0.1:\(port)/_control")!, headers: [("Content-Type", "application/json")],
            body: Data(json.utf8), timeout: 5))
        XCTAssertEqual(response.status, 200)
    }

    struct Request {
        var method: String
        var path: String
        var status: Int
        var headers: [String: String]
        var uuids: [String]
        var body: Any
        var compressedBytes: Int
    }

    /// Every recorded request so far.
    func requests() -> [Request] {
        guard let text = try? String(contentsOf: recording, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Request(
                method: object["method"] as? String ?? "", path: object["path"] as? String ?? "",
                status: object["status"] as? Int ?? 0, headers: object["headers"] as? [String: String] ?? [:],
                uuids: object["uuids"] as? [String] ?? [], body: object["body"] ?? NSNull(),
                compressedBytes: object["compressedBytes"] as? Int ?? 0)
        }
    }

    /// uuids the repository accepted (2xx), with the Idempotency-Keys they were accepted under.
    /// A repository that de-duplicates by key stores a uuid once when this set has one key.
    func acceptedKeys() -> [String: Set<String>] {
        var keys: [String: Set<String>] = [:]
        for request in requests() where request.method == "POST" && (200..<300).contains(request.status) {
            for uuid in request.uuids { keys[uuid, default: []].insert(request.headers["Idempotency-Key"] ?? "") }
        }
        return keys
    }

    /// uuids the repository accepted in a POST (2xx), with how often each was accepted.
    func acceptedCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for request in requests() where request.method == "POST" && (200..<300).contains(request.status) {
            for uuid in request.uuids { counts[uuid, default: 0] += 1 }
        }
        return counts
    }

    /// The uuids of the quantity samples of native bodies the repository accepted (2xx), with how
    /// often each was accepted. (A heartbeat series is sent once per version, under one uuid.)
    func acceptedSampleCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for request in requests() where request.method == "POST" && (200..<300).contains(request.status) {
            let samples = (request.body as? [String: Any])?["samples"] as? [[String: Any]] ?? []
            for sample in samples {
                if let uuid = sample["uuid"] as? String { counts[uuid, default: 0] += 1 }
            }
        }
        return counts
    }

    struct ServerError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

public import Foundation
import Glibc

/// A real `mosquitto` broker on 127.0.0.1, on a free port, with a generated configuration, and a
/// `mosquitto_sub` recording every message under a topic filter (topic, user properties, payload).
public final class MosquittoBroker: @unchecked Sendable {
    /// A TLS listener on 127.0.0.1 besides the plain, anonymous one (which the recorder uses).
    public struct TLSListener: Sendable {
        public let port: Int
        public let certificates: TestCertificates
        /// Clients authenticate with a user name and password from this `mosquitto_passwd` file.
        public var passwordFile: URL?
        /// Clients must show a certificate the CA signed; its common name is their user name.
        public var requireCertificate = false

        public init(certificates: TestCertificates, passwordFile: URL? = nil, requireCertificate: Bool = false) throws {
            self.port = try MosquittoBroker.freePort()
            self.certificates = certificates
            self.passwordFile = passwordFile
            self.requireCertificate = requireCertificate
        }

        var configuration: String {
            var lines = [
                "listener \(port) 127.0.0.1", "allow_anonymous false", "cafile \(certificates.ca.path)",
                "certfile \(certificates.serverCertificate.path)", "keyfile \(certificates.serverKey.path)",
            ]
            if let passwordFile { lines.append("password_file \(passwordFile.path)") }
            if requireCertificate { lines += ["require_certificate true", "use_identity_as_username true"] }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    public let directory: URL
    public let port: Int
    // Touched by the test's task only.
    private var process: Process?

    /// Writes the configuration. `persistent` saves sessions, subscriptions and queued messages
    /// to `mosquitto.db` at every change, so that after a ``stop()`` (SIGKILL) and ``start()`` a
    /// recorder's persistent session still holds what was published while it reconnected.
    /// Each of `tls` is a listener of its own, with its own authentication
    /// (`per_listener_settings`).
    public init(directory: URL, persistent: Bool = false, tls: [TLSListener] = []) throws {
        self.directory = directory
        self.port = try Self.freePort()
        // `user root`: started as root, mosquitto otherwise switches to the user `mosquitto`,
        // which cannot write the log or the database in the test's directory. Ignored otherwise.
        var configuration = """
            per_listener_settings true
            user root
            log_dest file \(directory.path)/mosquitto.log
            listener \(port) 127.0.0.1
            allow_anonymous true

            """
        configuration += tls.map(\.configuration).joined()
        if persistent {
            configuration += """
                persistence true
                persistence_location \(directory.path)/
                autosave_on_changes true
                autosave_interval 1

                """
        }
        try configuration.write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    /// A port nothing listens on now: bound with port 0, read back and released.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts the broker and waits until it accepts connections.
    public func start() async throws {
        let process = Process()
        // Through a Python exec that unblocks every signal first: a process spawned from a
        // Dispatch thread inherits that thread's blocked signals, and mosquitto must take SIGTERM
        // to save its persistence file when it stops (``stop()``).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                + "os.execv('/usr/sbin/mosquitto', ['mosquitto', '-c', sys.argv[1]])",
            directory.appendingPathComponent("mosquitto.conf").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let port = port
        try await waitUntil(timeout: .seconds(10), "mosquitto to listen on \(port)") { Self.accepts(port: port) }
    }

    /// Stops the broker with SIGTERM, as a service manager does: it saves its persistence file
    /// (the sessions and the messages queued for them) and exits; SIGKILL after 5 s if it has not.
    /// Then it refuses connections: an outage.
    public func stop() {
        guard let process else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    /// Whether something accepts TCP connections on `127.0.0.1:port`.
    public static func accepts(port: Int) -> Bool {
        guard let descriptor = loopbackConnection(port: port) else { return false }
        close(descriptor)
        return true
    }
}

/// `mosquitto_sub -V mqttv5` with a persistent session (QoS 1, a fixed client id, no clean
/// start), so it gets every message published while it is subscribed, across broker restarts.
public final class MQTTRecorder: @unchecked Sendable {
    public struct Message: Hashable {
        public var topic: String
        public var uuids: [String]
        public var payload: String
        public var retained: Bool
    }

    public let output: URL
    private let process = Process()

    public init(broker: MosquittoBroker, filter: String, name: String = "recorder") throws {
        output = broker.directory.appendingPathComponent("\(name).txt")
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: output.path])
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        // One line per message: retained flag, topic, user properties, payload, tab-separated.
        process.arguments = [
            "-V", "mqttv5", "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-i", "healthgate-test-\(name)",
            "-c", "-x", "3600", "-t", filter, "-F", "%r\t%t\t%P\t%p",
        ]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// SIGKILL, like ``MosquittoBroker/stop()``.
    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public var messages: [Message] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4 else { return nil }
            let uuids = fields[2].split(separator: " ").compactMap { property -> String? in
                property.hasPrefix("uuid:") ? String(property.dropFirst(5)) : nil
            }
            return Message(topic: String(fields[1]), uuids: uuids, payload: String(fields[3]), retained: fields[0] == "1")
        }
    }
}

extension MQTTRecorder {
    /// Publishes probes to `topic` until the recorder prints one: it is subscribed then.
    public func waitUntilSubscribed(broker: MosquittoBroker, probe topic: String) async throws {
        try await waitUntil(timeout: .seconds(10), "mosquitto_sub to subscribe") {
            let publisher = Process()
            publisher.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
            publisher.arguments = ["-V", "mqttv5", "-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-m", "probe"]
            try publisher.run()
            publisher.waitUntilExit()
            try await Task.sleep(for: .milliseconds(50))
            return self.messages.contains { $0.topic == topic }
        }
    }
}

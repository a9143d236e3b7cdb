import SampleBus
import Foundation
import GatewayTesting
import HealthModel
import MQTTBroker
import RemoteSinkKit
import GatewayRuntime
import XCTest

/// TLS and credentials against a `mosquitto` with TLS listeners (a CA and certificates generated
/// with `openssl`, users with `mosquitto_passwd`); the recorder listens on the plain listener.
extension MQTTBrokerSinkTests {
    static let password = "Tr0ub4dor&3-correct-horse"

    /// A broker with one TLS listener that wants a user name and password and one that wants a
    /// client certificate, and the CA that signed its certificate.
    func tlsBroker() async throws -> (broker: MosquittoBroker, password: MosquittoBroker.TLSListener,
                                      certificate: MosquittoBroker.TLSListener, certificates: TestCertificates) {
        let brokerDirectory = directory.appendingPathComponent("tls-broker")
        try FileManager.default.createDirectory(at: brokerDirectory, withIntermediateDirectories: true)
        let certificates = try TestCertificates(directory: brokerDirectory)
        let users = brokerDirectory.appendingPathComponent("passwd")
        try TestCertificates.passwordFile(at: users, user: "ward-7", password: Self.password)
        let password = try MosquittoBroker.TLSListener(certificates: certificates, passwordFile: users)
        let certificate = try MosquittoBroker.TLSListener(certificates: certificates, requireCertificate: true)
        let tls = try MosquittoBroker(directory: brokerDirectory, tls: [password, certificate])
        try await tls.start()
        return (tls, password, certificate, certificates)
    }

    func secretFile(_ text: String) throws -> String {
        let url = directory.appendingPathComponent("mqtt-password-\(UUID().uuidString)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testTLSWithCAFileUsernameAndPasswordFileDeliversEveryRecord() async throws {
        let (tls, listener, _, certificates) = try await tlsBroker()
        defer { tls.stop() }
        let recorder = try MQTTRecorder(broker: tls, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: tls, probe: "healthgate/probe")
        let log = RecordingLogSink()
        let passwordFile = try secretFile(Self.password + "\n")
        let running = try await start(configuration {
            $0.port = listener.port
            $0.caFile = certificates.ca.path
            $0.username = "ward-7"
            $0.passwordFile = passwordFile
        }, log: log)
        let records = try (0..<12).map { try spO2(95, at: Double($0)) }
        await running.feed(records)
        try await waitUntil(timeout: .seconds(30), "every record acknowledged over TLS") {
            let pending = try await running.unsent()
            return running.status.current?.records == records.count && pending == 0
        }
        XCTAssertEqual(running.status.current?.details["connection"], "connected")
        running.finish()
        try await running.task.value
        try await waitUntil(timeout: .seconds(10), "the recorder to receive every record") {
            Set(recorder.messages.flatMap(\.uuids)).isSuperset(of: records.map(\.id.uuidString))
        }
        let logged = (try? String(contentsOf: tls.directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? ""
        XCTAssertTrue(logged.contains("on port \(listener.port)") && logged.contains("u'ward-7'"), "the sink logged in as ward-7 on the TLS port")
        XCTAssertFalse(log.entries.contains { $0.message.contains(Self.password) }, "the password is never logged")
    }

    /// A wrong password: the broker refuses the connection, status and the log say so naming the
    /// broker and the user (never the password), and the records wait in the store until a
    /// start with the right password publishes them.
    func testWrongPasswordIsRefusedWithAClearErrorAndTheRecordsWait() async throws {
        let (tls, listener, _, certificates) = try await tlsBroker()
        defer { tls.stop() }
        let wrong = "not-the-Password-42"
        let log = RecordingLogSink()
        let wrongFile = try secretFile(wrong)
        let running = try await start(configuration {
            $0.port = listener.port
            $0.caFile = certificates.ca.path
            $0.username = "ward-7"
            $0.passwordFile = wrongFile
            // Long enough for a TLS handshake and its CONNACK on a loaded machine.
            $0.ackTimeoutSeconds = 2
        }, log: log)
        let records = try (0..<5).map { try spO2(96, at: Double($0)) }
        await running.feed(records)
        let broker = "127.0.0.1:\(listener.port)"
        let expected = "the broker \(broker) refused the connection: Not authorized (user \"ward-7\": check username and passwordFile)"
        do {
            try await waitUntil(timeout: .seconds(30), "the refusal shown in status") {
                running.status.current?.lastError?.contains(expected) == true
            }
        } catch {
            // What it showed instead, for the next time this fails on a loaded machine.
            XCTFail("status: \(running.status.current?.lastError ?? "no error"), \(running.status.current?.details ?? [:]); "
                + "log: \(log.entries.suffix(12).map(\.message))")
            throw error
        }
        XCTAssertEqual(running.status.current?.details["connection"], expected)
        XCTAssertEqual(running.status.current?.details["broker"], broker)
        try await waitUntil(timeout: .seconds(10), "the refusal logged") { log.contains(expected) }
        running.finish()
        try await running.task.value
        let unsent1 = try await running.unsent()
        XCTAssertEqual(unsent1, records.count, "the records wait in the store")
        let everything = log.entries.map(\.message) + [running.status.current?.lastError ?? ""]
            + (running.status.current?.details.values.map { $0 } ?? [])
        XCTAssertFalse(everything.contains { $0.contains(wrong) }, "the password is never logged or shown")

        let recorder = try MQTTRecorder(broker: tls, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: tls, probe: "healthgate/probe")
        try Self.password.write(toFile: wrongFile, atomically: true, encoding: .utf8)
        let again = try await start(configuration {
            $0.port = listener.port
            $0.caFile = certificates.ca.path
            $0.username = "ward-7"
            $0.passwordFile = wrongFile
        })
        try await waitUntil(timeout: .seconds(30), "the waiting records published with the right password") {
            let pending = try await again.unsent()
            return pending == 0
        }
        again.finish()
        try await again.task.value
        try await waitUntil(timeout: .seconds(10), "the recorder to receive every record") {
            Set(recorder.messages.flatMap(\.uuids)).isSuperset(of: records.map(\.id.uuidString))
        }
    }

    /// A broker that requires a client certificate accepts the one in certFile/keyFile (and takes
    /// its common name as the user); without one the handshake fails, named in status.
    func testClientCertificateFromCertFileAndKeyFile() async throws {
        let (tls, _, listener, certificates) = try await tlsBroker()
        defer { tls.stop() }
        let recorder = try MQTTRecorder(broker: tls, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: tls, probe: "healthgate/probe")

        let refused = try await start(configuration {
            $0.port = listener.port
            $0.caFile = certificates.ca.path
            $0.ackTimeoutSeconds = 0.5
        }, name: "no-certificate")
        let first = try (0..<3).map { try spO2(97, at: Double($0)) }
        await refused.feed(first)
        try await waitUntil(timeout: .seconds(30), "the failed handshake shown in status") {
            refused.status.current?.lastError?.contains("broker 127.0.0.1:\(listener.port)") == true
        }
        refused.finish()
        try await refused.task.value
        let unsent2 = try await refused.unsent()
        XCTAssertEqual(unsent2, first.count)

        let running = try await start(configuration {
            $0.port = listener.port
            $0.caFile = certificates.ca.path
            $0.certFile = certificates.clientCertificate.path
            $0.keyFile = certificates.clientKey.path
        })
        let records = try (0..<8).map { try spO2(98, at: Double($0)) }
        await running.feed(records)
        try await waitUntil(timeout: .seconds(30), "every record acknowledged with the client certificate") {
            let pending = try await running.unsent()
            // The refused sink's records too: a new sink starts at the store's beginning.
            return running.status.current?.records == first.count + records.count && pending == 0
        }
        running.finish()
        try await running.task.value
        try await waitUntil(timeout: .seconds(10), "the recorder to receive every record") {
            Set(recorder.messages.flatMap(\.uuids)).isSuperset(of: records.map(\.id.uuidString))
        }
        let logged = (try? String(contentsOf: tls.directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? ""
        XCTAssertTrue(logged.contains("u'\(TestCertificates.clientName)'"), "the broker took the certificate's name as the user")
    }

    /// A broker whose certificate the configured CA did not sign is not trusted: nothing is
    /// published, status names the broker, the records wait.
    func testABrokerCertificateFromAnotherCAIsNotTrusted() async throws {
        let (tls, listener, _, _) = try await tlsBroker()
        defer { tls.stop() }
        let other = try TestCertificates(directory: directory, prefix: "other-")
        let passwordFile = try secretFile(Self.password)
        let running = try await start(configuration {
            $0.port = listener.port
            $0.caFile = other.ca.path
            $0.username = "ward-7"
            $0.passwordFile = passwordFile
            $0.ackTimeoutSeconds = 0.5
        })
        let records = try (0..<4).map { try spO2(94, at: Double($0)) }
        await running.feed(records)
        // Reported by libmosquitto's log only: the handshake fails in its loop thread's reconnects.
        let expected = "cannot connect to the broker 127.0.0.1:\(listener.port): OpenSSL Error"
        try await waitUntil(timeout: .seconds(30), "the untrusted broker shown in status") {
            running.status.current?.lastError?.contains(expected) == true
        }
        XCTAssertTrue(running.status.current?.lastError?.contains("certificate verify failed") == true, "\(running.status.current?.lastError ?? "")")
        running.finish()
        try await running.task.value
        XCTAssertEqual(running.status.current?.records, 0)
        let unsent3 = try await running.unsent()
        XCTAssertEqual(unsent3, records.count)
        let logged = (try? String(contentsOf: tls.directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? ""
        XCTAssertFalse(logged.contains("u'ward-7'"), "the sink never logged in")
    }

    func testCertificateKeysAreCheckedTogether() throws {
        let environment = TestEnvironment.make(directory: directory)
        let certificates = try TestCertificates(directory: directory)
        let (ca, certificate, key) = (certificates.ca.path, certificates.clientCertificate.path, certificates.clientKey.path)
        let bad: [(String, MQTTBrokerConfiguration)] = [
            ("keyFile", MQTTBrokerConfiguration(host: "h").with { $0.caFile = ca; $0.certFile = certificate }),
            ("certFile", MQTTBrokerConfiguration(host: "h").with { $0.caFile = ca; $0.keyFile = key }),
            ("caFile", MQTTBrokerConfiguration(host: "h").with { $0.certFile = certificate; $0.keyFile = key }),
            ("certFile", MQTTBrokerConfiguration(host: "h").with { $0.caFile = ca; $0.certFile = "/nonexistent/client.pem"; $0.keyFile = key }),
            ("keyFile", MQTTBrokerConfiguration(host: "h").with { $0.caFile = ca; $0.certFile = certificate; $0.keyFile = "/nonexistent/client.key" }),
        ]
        for (key, configuration) in bad {
            XCTAssertThrowsError(try configuration.validated(in: environment), key) {
                XCTAssertEqual(($0 as? PluginConfigurationError)?.keyPath, key)
            }
        }
        XCTAssertNoThrow(try MQTTBrokerConfiguration(host: "h").with { $0.caFile = ca; $0.certFile = certificate; $0.keyFile = key }.validated(in: environment))
        let decoded = try ConfigurationJSONParser.parse(
            #"{"host": "h", "caFile": "\#(ca)", "certFile": "\#(certificate)", "keyFile": "\#(key)"}"#.utf8
        ).decodeStrictly(MQTTBrokerConfiguration.self)
        XCTAssertEqual(decoded.certFile, certificate)
        XCTAssertEqual(decoded.keyFile, key)
        XCTAssertThrowsError(try ConfigurationJSONParser.parse(#"{"host": "h", "certFiel": "x"}"#.utf8).decodeStrictly(MQTTBrokerConfiguration.self)) {
            XCTAssertTrue("\($0)".contains("certFile"), "\($0)")
        }
    }
}

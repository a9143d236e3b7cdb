import LinuxSystem
import FoundationEssentials
import RemoteSinkKit
import GatewayRuntime
import Synchronization

/// The sink's one MQTT client, created at the first delivery attempt (loading libmosquitto and
/// reading the password file then) and closed when the sink ends. A failed creation is tried
/// again at the next attempt. Thread-safe.
final class MQTTSinkConnection: Sendable {
    private let configuration: MQTTBrokerConfiguration
    private let library: MosquittoLibrary
    private let encoder: MQTTMessageEncoder
    private let name: String
    private let client = Mutex<MQTTClient?>(nil)

    init(configuration: MQTTBrokerConfiguration, library: MosquittoLibrary, encoder: MQTTMessageEncoder, name: String) {
        self.configuration = configuration
        self.library = library
        self.encoder = encoder
        self.name = name
    }

    /// The client, connecting it first if needed.
    /// - Throws: ``NativeLibraryError``, ``MQTTClientError`` (an unreadable password file, a
    ///   setting libmosquitto refuses).
    func connected() throws -> MQTTClient {
        try client.withLock { client in
            if let client { return client }
            var password: String?
            if let file = configuration.passwordFile {
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                    throw MQTTClientError(message: "cannot read the password file \(file)")
                }
                password = String(text.reversed().drop(while: \.isWhitespace).reversed())
            }
            let settings = MQTTClient.Settings(
                host: configuration.host, port: configuration.port,
                clientID: configuration.clientID ?? "healthgate-\(encoder.gateway)-\(name)",
                keepAliveSeconds: configuration.keepAliveSeconds,
                reconnectMaxDelaySeconds: Int(configuration.retry.maxDelaySeconds.rounded(.up)),
                statusTopic: encoder.statusTopic, username: configuration.username, password: password,
                caFile: configuration.caFile, certFile: configuration.certFile, keyFile: configuration.keyFile)
            let created = try MQTTClient(library: library, settings: settings)
            client = created
            return created
        }
    }

    /// The client's connection events; nil before a client exists.
    var events: MQTTConnectionEvents? { client.withLock { $0?.events } }

    /// Publishes `offline` (retained) when connected, then disconnects and frees the client.
    func close(clock: any GatewayClock) async {
        guard let client = client.withLock({ client in defer { client = nil }; return client }) else { return }
        await client.announceOffline(clock: clock, timeout: .seconds(2))
        client.close()
    }
}

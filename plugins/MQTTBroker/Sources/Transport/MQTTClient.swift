internal import CMosquitto
import AsyncPrimitives
import FoundationEssentials
import GatewayRuntime
#if canImport(Glibc)
import Glibc
#endif

/// One MQTT 5 connection through libmosquitto, its network loop on libmosquitto's own thread
/// (`mosquitto_loop_start`).
///
/// That thread reads PUBACKs, sends keepalives and reconnects with backoff after a broker
/// restart; it reports through the callbacks into ``MQTTConnectionEvents``, an
/// ``AsyncCondition`` the sink's tasks wait on. The tasks only call `mosquitto_publish_v5`, which
/// libmosquitto allows from any thread once the loop thread runs, so nothing blocks the
/// cooperative pool. The Last Will (`offline`, retained) is registered before the first connect,
/// and every successful connect publishes the retained `online` status.
final class MQTTClient: Sendable {
    struct Settings: Sendable {
        var host: String
        var port: Int
        var clientID: String
        var keepAliveSeconds: Int
        var reconnectMaxDelaySeconds: Int
        var statusTopic: String
        var username: String?
        var password: String?
        var caFile: String?
        var certFile: String?
        var keyFile: String?

        /// `host:port`, as errors name the broker.
        var broker: String { "\(host):\(port)" }
    }

    /// A libmosquitto client handle.
    // @unchecked Sendable: an immutable pointer; libmosquitto serializes access to the client
    // internally once the loop thread runs (mosquitto_threaded_set by loop_start), which the
    // compiler cannot see.
    private struct Handle: @unchecked Sendable { let pointer: OpaquePointer }

    private let entryPoints: MosquittoEntryPoints
    private let handle: Handle
    private let retainedEvents: Unmanaged<MQTTConnectionEvents>
    let events: MQTTConnectionEvents
    let settings: Settings

    /// Creates the client, registers the Will and the callbacks, starts the loop thread and
    /// starts connecting. A broker that is down is not an error: the loop thread retries.
    /// - Throws: ``MQTTClientError`` when libmosquitto refuses a setting.
    init(library: MosquittoLibrary, settings: Settings) throws {
        let entryPoints = try library.entryPoints()
        self.entryPoints = entryPoints
        self.settings = settings
        let events = MQTTConnectionEvents(
            entryPoints: entryPoints, statusTopic: settings.statusTopic, broker: settings.broker, username: settings.username)
        self.events = events
        retainedEvents = Unmanaged.passRetained(events)
        guard let pointer = entryPoints.new(settings.clientID, true, retainedEvents.toOpaque()) else {
            retainedEvents.release()
            throw MQTTClientError(message: "mosquitto_new failed (out of memory or an invalid client id)")
        }
        handle = Handle(pointer: pointer)
        func check(_ code: Int32, _ what: String) throws {
            guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
                throw MQTTClientError(message: "\(what): \(entryPoints.describe(code))")
            }
        }
        do {
            try check(entryPoints.intOption(pointer, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5), "MQTT 5")
            // Without it, the last PUBLISH of a batch waits for the broker's delayed ACK (Nagle):
            // up to 40 ms per batch, while the sink waits for that batch's PUBACKs.
            try check(entryPoints.intOption(pointer, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
            let offline = Array("offline".utf8)
            try check(entryPoints.willSet(pointer, settings.statusTopic, Int32(offline.count), offline, 1, true, nil), "Last Will")
            if let username = settings.username {
                try check(entryPoints.usernamePasswordSet(pointer, username, settings.password), "username")
            }
            if let caFile = settings.caFile {
                // Checked here, not at the handshake: libmosquitto loads the files now and a
                // certificate that does not match its key fails with a clear error.
                try check(
                    entryPoints.tlsSet(pointer, caFile, nil, settings.certFile, settings.keyFile, nil),
                    settings.certFile == nil ? "TLS (caFile)" : "TLS (caFile, certFile, keyFile)")
            }
            try check(
                entryPoints.reconnectDelaySet(pointer, 1, UInt32(max(1, settings.reconnectMaxDelaySeconds)), true), "reconnect delay")
            // Each callback is handed the client it reports on, so the events need no pointer of
            // their own.
            entryPoints.connectCallbackSet(pointer) { client, context, code in
                guard let client, let context else { return }
                Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue().connected(client: client, code: code)
            }
            entryPoints.disconnectCallbackSet(pointer) { client, context, code in
                guard let client, let context else { return }
                Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue().disconnected(client: client, code: code)
            }
            entryPoints.publishCallbackSet(pointer) { _, context, mid, reason, _ in
                guard let context else { return }
                Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue().published(mid: mid, reason: reason)
            }
            entryPoints.logCallbackSet(pointer, MQTTConnectionEvents.logCallback)
            try check(entryPoints.loopStart(pointer), "network loop")
        } catch {
            entryPoints.destroy(pointer)
            retainedEvents.release()
            throw error
        }
        let code = entryPoints.connectAsync(pointer, settings.host, Int32(settings.port), Int32(settings.keepAliveSeconds))
        if code != Int32(MOSQ_ERR_SUCCESS.rawValue) {
            // The loop thread keeps trying; the error is what status shows until it succeeds.
            events.failedToConnect(entryPoints.describe(code) + (code == Int32(MOSQ_ERR_ERRNO.rawValue) ? ": \(String(cString: strerror(errno)))" : ""))
        }
    }

    /// Publishes `message` with QoS 1 and its uuids as MQTT 5 user properties; returns its mid.
    /// - Throws: ``MQTTClientError`` when libmosquitto refuses it (not connected, too large).
    func publish(_ message: MQTTMessage, retain: Bool = false) throws -> Int32 {
        var properties: OpaquePointer?
        defer { entryPoints.propertyFreeAll(&properties) }
        for uuid in message.uuids {
            let code = entryPoints.propertyAddStringPair(&properties, Int32(MQTT_PROP_USER_PROPERTY.rawValue), "uuid", uuid)
            guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
                throw MQTTClientError(message: "user property: \(entryPoints.describe(code))")
            }
        }
        var mid: Int32 = 0
        let code = message.payload.withUnsafeBytes { bytes in
            entryPoints.publish(handle.pointer, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, 1, retain, properties)
        }
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            throw MQTTClientError(message: "publish to \(message.topic): \(entryPoints.describe(code))")
        }
        return mid
    }

    /// Publishes the retained `offline` status (a clean disconnect does not fire the Will) and
    /// waits at most `timeout` for its PUBACK; nothing when not connected.
    func announceOffline(clock: any GatewayClock, timeout: Duration) async {
        guard events.state.value.connected else { return }
        let offline = MQTTMessage(topic: settings.statusTopic, uuids: [], payload: Array("offline".utf8))
        let events = events
        guard let mid = try? events.tracking({ try publish(offline, retain: true) }) else { return }
        _ = try? await race(sleep: { try await clock.sleep(for: timeout) }) {
            try await events.state.wait { $0.acknowledged[mid] != nil || !$0.connected }
        }
        events.forget([mid])
    }

    /// Disconnects, stops the loop thread (joins it) and frees the handle. Call once, last.
    ///
    /// Not connected, the loop thread is reconnecting, and is cancelled rather than asked to
    /// stop: libmosquitto 2.0's `mosquitto_disconnect` marks the client disconnected, but a
    /// reconnect the thread has begun marks it connecting again, so the thread backs off and
    /// retries for ever (its delay up to `retry.maxDelaySeconds`) and the join never returns
    /// (1 stop in 300 against a closed port: the configuration sweep's "sinks did not drain
    /// within 30.0 seconds"). Waiting in `select` or `connect`, the thread holds none of the
    /// client's locks, so `mosquitto_destroy` after the cancel is safe. Connected, the
    /// disconnect closes the socket and the thread ends by itself, after sending what it holds.
    func close() {
        let connected = events.state.value.connected
        _ = entryPoints.disconnect(handle.pointer)
        _ = entryPoints.loopStop(handle.pointer, !connected)
        entryPoints.destroy(handle.pointer)
        retainedEvents.release()
    }
}

/// A refusal by libmosquitto or the broker.
struct MQTTClientError: Error, Sendable, CustomStringConvertible {
    var message: String
    var description: String { message }
}

internal import CMosquitto
import AsyncPrimitives

/// What libmosquitto's loop thread reports (connects, disconnects, PUBACKs), for the sink's tasks
/// to wait on. The callbacks run on that thread and only update the condition, except that a
/// successful connect publishes the retained `online` status right away.
///
/// libmosquitto's log callback is set only while not connected: a failed TLS handshake (an
/// untrusted broker certificate, a refused client certificate) during the loop thread's
/// reconnects reaches no other callback, only the log. While connected it is unset, because
/// libmosquitto formats every debug line (two per message) for a log callback.
final class MQTTConnectionEvents: Sendable {
    struct State: Sendable {
        var connected = false
        /// Counts successful connects: a change means the connection was lost in between.
        var connections = 0
        /// The mids published through ``MQTTConnectionEvents/tracking(_:)`` whose PUBACK has not
        /// arrived. A PUBACK for any other mid (the `online` status, a batch given up after a
        /// timeout) is ignored: libmosquitto's mids wrap after 65 535 messages, and a stale entry
        /// would pass a later message with the same mid as acknowledged before its PUBACK.
        var awaited: Set<Int32> = []
        /// Reason codes of PUBACKs received for awaited mids (0: accepted; 16: no subscribers,
        /// also accepted; 128 and above: refused).
        var acknowledged: [Int32: Int32] = [:]
        /// The broker's or the network's last refusal, for status (naming the broker, never the
        /// password); nil once connected.
        var lastError: String?
        /// The broker refused the last connection attempt (CONNACK with an error): waiting for a
        /// connection is pointless until the configuration changes.
        var refused = false
    }

    let state = AsyncCondition(State())
    private let entryPoints: MosquittoEntryPoints
    private let statusTopic: String
    /// `host:port`, named in every error.
    private let broker: String
    private let username: String?

    init(entryPoints: MosquittoEntryPoints, statusTopic: String, broker: String, username: String?) {
        self.entryPoints = entryPoints
        self.statusTopic = statusTopic
        self.broker = broker
        self.username = username
    }

    /// The CONNACK reason codes that point at the credentials.
    static let credentialCodes: Set<Int32> = [
        Int32(MQTT_RC_BAD_USERNAME_OR_PASSWORD.rawValue), Int32(MQTT_RC_NOT_AUTHORIZED.rawValue),
    ]

    /// Records libmosquitto's errors while not connected (see the type's documentation).
    static let logCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?) -> Void = {
        _, context, level, text in
        guard let context, let text, level & Int32(MOSQ_LOG_ERR) != 0 else { return }
        Unmanaged<MQTTConnectionEvents>.fromOpaque(context).takeUnretainedValue().logged(String(cString: text))
    }

    func logged(_ message: String) {
        state.update {
            // A CONNACK refusal says more than what libmosquitto logs after it.
            guard !$0.connected, !$0.refused else { return }
            $0.lastError = "cannot connect to the broker \(self.broker): \(message)"
        }
    }

    /// A connect of `client`, reported on its loop thread, which is where libmosquitto lets the
    /// callback use the client it passes.
    func connected(client: OpaquePointer, code: Int32) {
        guard code == 0 else {
            // MQTT 5 CONNACK reason codes (135: not authorized, 134: bad user name or password).
            let reason = entryPoints.reasonString(code).map { String(cString: $0) } ?? "reason \(code)"
            let credentials = Self.credentialCodes.contains(code)
                ? username.map { " (user \"\($0)\": check username and passwordFile)" } ?? " (no username configured)"
                : ""
            state.update {
                $0.lastError = "the broker \(self.broker) refused the connection: \(reason)\(credentials)"
                $0.refused = true
            }
            return
        }
        entryPoints.logCallbackSet(client, nil)
        let online = Array("online".utf8)
        _ = online.withUnsafeBytes { bytes in
            entryPoints.publish(client, nil, statusTopic, Int32(bytes.count), bytes.baseAddress, 1, true, nil)
        }
        state.update {
            $0.connected = true
            $0.connections += 1
            $0.lastError = nil
            $0.refused = false
        }
    }

    /// A disconnect of `client`, reported on its loop thread like ``connected(client:code:)``.
    func disconnected(client: OpaquePointer, code: Int32) {
        entryPoints.logCallbackSet(client, Self.logCallback)
        state.update {
            $0.connected = false
            if code != 0, $0.lastError == nil {
                $0.lastError = "connection to the broker \(self.broker) lost (\(self.entryPoints.describe(code)))"
            }
        }
    }

    func failedToConnect(_ reason: String) {
        state.update { $0.lastError = "cannot connect to the broker \(self.broker): \(reason)" }
    }

    func published(mid: Int32, reason: Int32) {
        state.update {
            guard $0.awaited.remove(mid) != nil else { return }
            $0.acknowledged[mid] = reason
        }
    }

    /// Runs `publish`, which publishes one message and returns its mid, and awaits that mid's
    /// PUBACK. The state is held meanwhile, so the loop thread cannot report the PUBACK before
    /// the mid is awaited (libmosquitto's publish calls no callback once its loop thread runs).
    func tracking(_ publish: () throws -> Int32) rethrows -> Int32 {
        try state.update { state in
            let mid = try publish()
            state.awaited.insert(mid)
            return mid
        }
    }

    /// Forgets the PUBACKs of `mids`, received or not (once the sink has acted on them).
    func forget(_ mids: [Int32]) {
        state.update {
            for mid in mids {
                $0.acknowledged[mid] = nil
                $0.awaited.remove(mid)
            }
        }
    }
}

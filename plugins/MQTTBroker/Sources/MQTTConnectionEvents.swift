internal import CMosquitto
import AsyncPrimitives
import Synchronization

/// What libmosquitto's loop thread reports (connects, disconnects, PUBACKs), for the sink's tasks
/// to wait on. The callbacks run on that thread and only update the condition, except that a
/// successful connect publishes the retained `online` status right away.
final class MQTTConnectionEvents: Sendable {
    struct State: Sendable {
        var connected = false
        /// Counts successful connects: a change means the connection was lost in between.
        var connections = 0
        /// Reason codes of PUBACKs received for the mids still of interest (0: accepted; 16: no
        /// subscribers, also accepted; 128 and above: refused).
        var acknowledged: [Int32: Int32] = [:]
        /// The broker's or the network's last refusal, for status; nil once connected.
        var lastError: String?
    }

    private struct Handle: @unchecked Sendable { let pointer: OpaquePointer }

    let state = AsyncCondition(State())
    private let entryPoints: MosquittoEntryPoints
    private let statusTopic: String
    private let handle = Mutex<Handle?>(nil)

    init(entryPoints: MosquittoEntryPoints, statusTopic: String) {
        self.entryPoints = entryPoints
        self.statusTopic = statusTopic
    }

    func attach(_ pointer: OpaquePointer) {
        handle.withLock { $0 = Handle(pointer: pointer) }
    }

    func detach() {
        handle.withLock { $0 = nil }
    }

    func connected(code: Int32) {
        guard code == 0 else {
            // MQTT 5 CONNACK reason codes (135: not authorized, 134: bad user name or password).
            let reason = entryPoints.reasonString(code).map { String(cString: $0) } ?? "reason \(code)"
            state.update { $0.lastError = "broker refused the connection: \(reason)" }
            return
        }
        if let pointer = handle.withLock({ $0?.pointer }) {
            let online = Array("online".utf8)
            _ = online.withUnsafeBytes { bytes in
                entryPoints.publish(pointer, nil, statusTopic, Int32(bytes.count), bytes.baseAddress, 1, true, nil)
            }
        }
        state.update {
            $0.connected = true
            $0.connections += 1
            $0.lastError = nil
        }
    }

    func disconnected(code: Int32) {
        state.update {
            $0.connected = false
            if code != 0, $0.lastError == nil {
                $0.lastError = "connection to the broker lost (\(self.entryPoints.describe(code)))"
            }
        }
    }

    func failedToConnect(_ reason: String) {
        state.update { $0.lastError = "cannot connect to the broker: \(reason)" }
    }

    func published(mid: Int32, reason: Int32) {
        state.update { $0.acknowledged[mid] = reason }
    }

    /// Forgets the PUBACKs of `mids` (once the sink has acted on them).
    func forget(_ mids: [Int32]) {
        state.update { for mid in mids { $0.acknowledged[mid] = nil } }
    }
}

import AsyncPrimitives
import FoundationEssentials
import RemoteSinkKit
import GatewayRuntime
import SampleBus

/// The MQTT broker as a ``RemoteReceiver``: a batch is published with QoS 1, and counts as
/// delivered when a PUBACK accepting it came for every message. A lost connection, a PUBACK that
/// does not come within `ackTimeoutSeconds` or a refusal makes the whole batch fail; the follower
/// publishes it again after a backoff, with the same topics, uuids and bytes.
struct MQTTReceiver: RemoteReceiver {
    let configuration: MQTTBrokerConfiguration
    let encoder: MQTTMessageEncoder
    let connection: MQTTSinkConnection
    /// Home Assistant discovery, when `homeAssistantDiscovery` is on.
    let announcements: HomeAssistantAnnouncements?

    var destination: String { "\(configuration.host):\(configuration.port)" }

    var payloadIdentity: String { encoder.identity }

    func prepare(context: FollowerContext) async {
        context.status.setDetail("broker", destination)
        do {
            _ = try connection.connected()
        } catch {
            // Reported, not thrown: the follower retries each batch with backoff, trying to load
            // libmosquitto and connect again each time.
            context.logger.error("\(error). The changes wait in the store and publishing is retried with backoff")
            context.status.reportError("\(error)", at: context.clock.now())
        }
    }

    /// Everything, but in the `expand` form a series still open (its closed version follows).
    func accepts(_ change: FollowedChange) -> Bool { encoder.quantitySeries.admits(change) }

    func send(_ batch: FollowerBatch, context: FollowerContext) async -> DeliveryOutcome {
        let messages: [MQTTMessage]
        do {
            messages = try encoder.messages(for: batch)
        } catch {
            return .rejected(status: 0, answer: "cannot encode the batch: \(error)")
        }
        let client: MQTTClient
        do {
            client = try connection.connected()
        } catch {
            return .retry(reason: "\(error)", status: nil, retryAfter: nil)
        }
        let events = client.events
        let timeout = Duration.milliseconds(Int64(configuration.ackTimeoutSeconds * 1000))
        if !events.state.value.connected {
            _ = try? await race(sleep: { try await context.clock.sleep(for: timeout) }) {
                try await events.state.wait { $0.connected || $0.refused }
            }
            guard events.state.value.connected else {
                let reason = events.state.value.lastError ?? "not connected to \(destination)"
                context.status.setDetail("connection", reason)
                return .retry(reason: reason, status: nil, retryAfter: nil)
            }
        }
        context.status.setDetail("connection", "connected")
        let connections = events.state.value.connections
        // Discovery configs go first, retained, and count like the batch's records: the cursor
        // passes the batch only when Home Assistant's configs were acknowledged too.
        var discovery = HomeAssistantAnnouncements.Plan()
        if let announcements {
            do {
                discovery = try await announcements.plan(for: batch, connection: connections)
            } catch {
                return .retry(reason: "Home Assistant discovery: \(error)", status: nil, retryAfter: nil)
            }
        }
        var mids: [Int32] = []
        mids.reserveCapacity(discovery.messages.count + messages.count)
        for (message, retain) in discovery.messages.map({ ($0, true) }) + messages.map({ ($0, false) }) {
            do {
                mids.append(try events.tracking { try client.publish(message, retain: retain) })
            } catch {
                events.forget(mids)
                return .retry(reason: "\(error)", status: nil, retryAfter: nil)
            }
        }
        let wanted = mids
        _ = try? await race(sleep: { try await context.clock.sleep(for: timeout) }) {
            // Checked at every PUBACK; they come in order, so the last mid first makes it cheap.
            try await events.state.wait { state in
                !state.connected || state.connections != connections
                    || wanted.reversed().allSatisfy { state.acknowledged[$0] != nil }
            }
        }
        let state = events.state.value
        events.forget(wanted)
        if wanted.allSatisfy({ state.acknowledged[$0] != nil }) {
            if let refusal = wanted.compactMap({ state.acknowledged[$0] }).first(where: { $0 >= 128 }) {
                // 135: not authorized (MQTT 5 §3.4.2.1).
                if refusal == 135 { return .authentication(status: Int(refusal)) }
                return .retry(reason: "the broker refused a message with reason code \(refusal)", status: Int(refusal), retryAfter: nil)
            }
            announcements?.delivered(discovery, connection: connections)
            return .delivered
        }
        if !state.connected || state.connections != connections {
            return .retry(reason: state.lastError ?? "the connection to the broker was lost", status: nil, retryAfter: nil)
        }
        return .retry(
            reason: "no PUBACK within \(ConfigurationDecoder.format(configuration.ackTimeoutSeconds)) s", status: nil, retryAfter: nil)
    }
}

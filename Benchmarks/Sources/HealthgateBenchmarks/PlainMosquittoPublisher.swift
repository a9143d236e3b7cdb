import CMosquitto
import Foundation

/// The MQTT benchmark's baseline: libmosquitto's C API and nothing else. One MQTT 5 client with
/// its network loop on libmosquitto's thread (`mosquitto_loop_start`, as the sink), publishing
/// pre-encoded messages at QoS 1 with a `uuid` user property in one loop, then waiting until the
/// loop thread has counted a PUBACK for each.
///
/// `@unchecked Sendable`: the counters are guarded by `condition`; the handle is used by the
/// caller's thread and libmosquitto's loop thread, which libmosquitto allows once the loop runs.
final class PlainMosquittoPublisher: @unchecked Sendable {
    struct Message {
        var topic: String
        var uuid: String
        var payload: [UInt8]
    }

    private let handle: OpaquePointer
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var acknowledged = 0
    private var refused = 0
    private var connected = false

    /// Connects to the broker on 127.0.0.1:`port` and waits for the CONNACK.
    init(port: Int) throws {
        mosquitto_lib_init()
        guard let handle = mosquitto_new("healthgate-bench-baseline", true, nil) else {
            throw MQTTBenchmarkFailure(description: "mosquitto_new failed")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
        mosquitto_connect_callback_set(handle) { _, context, code in
            guard let context else { return }
            let publisher = Unmanaged<PlainMosquittoPublisher>.fromOpaque(context).takeUnretainedValue()
            publisher.condition.lock()
            publisher.connected = code == 0
            publisher.condition.broadcast()
            publisher.condition.unlock()
        }
        mosquitto_publish_v5_callback_set(handle) { _, context, _, reason, _ in
            guard let context else { return }
            let publisher = Unmanaged<PlainMosquittoPublisher>.fromOpaque(context).takeUnretainedValue()
            publisher.condition.lock()
            publisher.acknowledged += 1
            if reason >= 128 { publisher.refused += 1 }
            publisher.condition.broadcast()
            publisher.condition.unlock()
        }
        guard mosquitto_loop_start(handle) == Int32(MOSQ_ERR_SUCCESS.rawValue),
            mosquitto_connect_async(handle, "127.0.0.1", Int32(port), 30) == Int32(MOSQ_ERR_SUCCESS.rawValue)
        else {
            mosquitto_destroy(handle)
            throw MQTTBenchmarkFailure(description: "the baseline client cannot connect to 127.0.0.1:\(port)")
        }
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while !connected {
            guard condition.wait(until: deadline) else {
                throw MQTTBenchmarkFailure(description: "the baseline client got no CONNACK from 127.0.0.1:\(port)")
            }
        }
    }

    /// Publishes every message at QoS 1 and returns when each has its PUBACK.
    func publishAll(_ messages: [Message]) throws {
        condition.lock()
        acknowledged = 0
        refused = 0
        condition.unlock()
        for message in messages {
            var properties: OpaquePointer?
            _ = mosquitto_property_add_string_pair(&properties, Int32(MQTT_PROP_USER_PROPERTY.rawValue), "uuid", message.uuid)
            let code = message.payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(handle, nil, message.topic, Int32(bytes.count), bytes.baseAddress, 1, false, properties)
            }
            mosquitto_property_free_all(&properties)
            guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
                throw MQTTBenchmarkFailure(description: "baseline: mosquitto_publish_v5 failed with \(code)")
            }
        }
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(120)
        while acknowledged < messages.count {
            guard condition.wait(until: deadline) else {
                throw MQTTBenchmarkFailure(description: "baseline: \(acknowledged) of \(messages.count) PUBACKs in 120 s")
            }
        }
        guard refused == 0 else { throw MQTTBenchmarkFailure(description: "baseline: the broker refused \(refused) messages") }
    }

    /// Disconnects, joins the loop thread and frees the client.
    func close() {
        _ = mosquitto_disconnect(handle)
        _ = mosquitto_loop_stop(handle, false)
        mosquitto_destroy(handle)
    }
}

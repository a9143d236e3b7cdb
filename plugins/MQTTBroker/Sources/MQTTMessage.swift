/// One PUBLISH: its topic, the uuids of the records it carries (its `uuid` user properties) and
/// its payload.
struct MQTTMessage: Sendable, Hashable {
    var topic: String
    var uuids: [String]
    var payload: [UInt8]
}

/// The stored form of a sealed batch's messages, the outbox body: encoded once when the batch is
/// sealed and published unchanged on every attempt and after every restart, so a resend carries
/// the same topics, uuids and JSON bytes.
///
/// Per message, every length a 4-byte little-endian count: the topic's length and UTF-8, the
/// number of uuids, each uuid's length and text, the payload's length and bytes.
enum MQTTMessageFraming {
    static func encode(_ messages: [MQTTMessage]) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ count: Int) {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).littleEndian) { bytes.append(contentsOf: $0) }
        }
        for message in messages {
            append(message.topic.utf8.count)
            bytes.append(contentsOf: message.topic.utf8)
            append(message.uuids.count)
            for uuid in message.uuids {
                append(uuid.utf8.count)
                bytes.append(contentsOf: uuid.utf8)
            }
            append(message.payload.count)
            bytes.append(contentsOf: message.payload)
        }
        return bytes
    }

    /// The messages, or nil when the bytes are not in this form (a damaged row).
    static func decode(_ bytes: [UInt8]) -> [MQTTMessage]? {
        var index = 0
        func count() -> Int? {
            guard bytes.count - index >= 4 else { return nil }
            defer { index += 4 }
            return bytes[index..<index + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        func take(_ length: Int) -> [UInt8]? {
            guard bytes.count - index >= length else { return nil }
            defer { index += length }
            return Array(bytes[index..<index + length])
        }
        var messages: [MQTTMessage] = []
        while index < bytes.count {
            guard let topicLength = count(), let topic = take(topicLength), let uuidCount = count() else { return nil }
            var uuids: [String] = []
            for _ in 0..<uuidCount {
                guard let length = count(), let uuid = take(length) else { return nil }
                uuids.append(String(decoding: uuid, as: UTF8.self))
            }
            guard let payloadLength = count(), let payload = take(payloadLength) else { return nil }
            messages.append(MQTTMessage(topic: String(decoding: topic, as: UTF8.self), uuids: uuids, payload: payload))
        }
        return messages
    }
}

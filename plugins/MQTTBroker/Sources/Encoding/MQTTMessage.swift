/// One PUBLISH: its topic, the uuids of the records (or deletions) it carries (its `uuid` user
/// properties) and its payload.
struct MQTTMessage: Sendable, Hashable {
    var topic: String
    var uuids: [String]
    var payload: [UInt8]
}

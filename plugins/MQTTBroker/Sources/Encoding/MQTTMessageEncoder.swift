import FoundationEssentials
import HealthModel
import HealthStore
import RemoteSinkKit

/// Turns a batch of the store's changes into MQTT messages, the same messages on every attempt.
///
/// Topics are `{prefix}/{gateway}/{device}/{type}`: the device level is the device's local
/// identifier (else its name, else `unknown`), the type level the quantity or correlation type's
/// identifier, `heartbeatSeries` or `workout`. `+`, `#` and `/` in a level become `_`, so a device
/// name can never add a level or a wildcard. A record's payload is its HealthJSON; a new version
/// of an object (a grown heartbeat series, a higher sync version) goes to the same topic, its
/// sync identifier and version in the payload's metadata: a quantity series on its type's
/// topic in each version as it grows, or, in the `expand` form, once closed, each of its
/// quantities as a sample message (``QuantitySeriesForm``). A deletion is a message on
/// `{prefix}/{gateway}/deleted`: `{"kind":…,"type":…,"uuid":…}`.
///
/// A record attributed to a person (``HealthModel/HealthRecord/person``: a reading's
/// `healthgate.person`, a participant's workout's participant) goes to
/// `{prefix}/{gateway}/people/{person}/{type}` too, the same payload: a subscriber follows one
/// person's readings whichever device took them (one more level than a device's topic, so the
/// two never meet). The person's level is their `identifiers.mqttTopic`, else their name.
struct MQTTMessageEncoder: Sendable {
    var prefix: String
    var gateway: String
    var mode: MQTTMessageMode
    var quantitySeries: QuantitySeriesForm
    /// A person's topic level by name, where it is not the name (`identifiers.mqttTopic`).
    var people: [String: String] = [:]

    /// Every setting of the encoder that shapes its messages, as a stable text (the topics'
    /// levels last: they are free text). The follower mixes it into each batch's key; MQTT
    /// carries no key, so it only keeps the follower's rule (a key names one payload) whole.
    var identity: String {
        // Without topics of their own, as before there were any.
        let people = people.isEmpty ? "" : " people=" + people.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        return "mode=\(mode.rawValue)\(quantitySeries.identity)\(people) topics=\(prefix)/\(gateway)"
    }

    /// The status topic, `{prefix}/{gateway}/status`, for `online` and the Will `offline`.
    var statusTopic: String { "\(prefix)/\(gateway)/status" }
    /// The topic of deletions, `{prefix}/{gateway}/deleted`.
    var deletedTopic: String { "\(prefix)/\(gateway)/deleted" }

    /// The topic of `record`.
    func topic(for record: HealthRecord) -> String {
        topic(device: Self.deviceLevel(record.device), type: record.typeIdentifier)
    }

    /// The topic of `device`'s records of `type`.
    func topic(device: String, type: String) -> String {
        "\(prefix)/\(gateway)/\(Self.level(device))/\(Self.level(type))"
    }

    /// The topic of `person`'s records of `type`.
    func topic(person: String, type: String) -> String {
        "\(prefix)/\(gateway)/people/\(personLevel(person))/\(Self.level(type))"
    }

    /// The level that names `person` in their topics: their `mqttTopic`, else their name.
    func personLevel(_ person: String) -> String { Self.level(people[person] ?? person) }

    /// The device a topic names, before `level` cleans it: its local identifier, else its name,
    /// else `unknown` (the store names a tombstone's device the same way).
    static func deviceLevel(_ device: Device?) -> String {
        device.flatMap { $0.localIdentifier ?? $0.name } ?? "unknown"
    }

    static func level(_ text: String) -> String {
        let cleaned = String(text.map { $0 == "/" || $0 == "+" || $0 == "#" || $0 == "\0" ? "_" : $0 })
        return cleaned.isEmpty ? "_" : cleaned
    }

    /// The messages of `batch`, in its order (in `batch` mode, one per topic, in the order each
    /// topic first appears).
    /// - Throws: when a record cannot be encoded (a value JSON cannot hold).
    func messages(for batch: FollowerBatch) throws -> [MQTTMessage] {
        let encoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        var routed: [(topic: String, uuid: String, payload: [UInt8])] = []
        routed.reserveCapacity(batch.changes.count)
        for change in batch.changes {
            switch change {
            case .stored(let stored, _):
                for record in quantitySeries.records(stored) {
                    let payload = try HealthJSONPayload.encode(record, encoder: encoder, writer: &writer)
                    routed.append((topic(for: record), "\(record.id)", payload))
                    if let person = record.person {
                        routed.append((topic(person: person, type: record.typeIdentifier), "\(record.id)", payload))
                    }
                }
            case .deleted(let deletion):
                let type = (try? encoder.encode(deletion.type)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
                routed.append((
                    deletedTopic, "\(deletion.id)",
                    Array("{\"kind\":\"\(deletion.kind.rawValue)\",\"type\":\(type),\"uuid\":\"\(deletion.id)\"}".utf8)))
            }
        }
        switch mode {
        case .record:
            return routed.map { MQTTMessage(topic: $0.topic, uuids: [$0.uuid], payload: $0.payload) }
        case .batch:
            var messages: [MQTTMessage] = []
            var index: [String: Int] = [:]
            for (topic, uuid, payload) in routed {
                if let position = index[topic] {
                    messages[position].uuids.append(uuid)
                    messages[position].payload.append(UInt8(ascii: ","))
                    messages[position].payload.append(contentsOf: payload)
                } else {
                    index[topic] = messages.count
                    messages.append(MQTTMessage(topic: topic, uuids: [uuid], payload: [UInt8(ascii: "[")] + payload))
                }
            }
            for position in messages.indices { messages[position].payload.append(UInt8(ascii: "]")) }
            return messages
        }
    }
}

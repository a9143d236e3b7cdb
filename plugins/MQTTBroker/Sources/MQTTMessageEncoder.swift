import Foundation
import HealthModel
import RemoteOutbox

/// Turns outbox records into the messages of a sealed batch (see ``MQTTMessageFraming``).
///
/// Topics are `{prefix}/{gateway}/{device}/{type}`: the device level is the device's local
/// identifier (else its name, else `unknown`), the type level the quantity or correlation type's
/// identifier, `heartbeatSeries` or `workout`. `+`, `#` and `/` in a level become `_`, so a device
/// name can never add a level or a wildcard. The payload of a record is its stored HealthJSON,
/// byte for byte.
struct MQTTMessageEncoder: Sendable {
    var prefix: String
    var gateway: String
    var mode: MQTTMessageMode

    /// The status topic, `{prefix}/{gateway}/status`, for `online` and the Will `offline`.
    var statusTopic: String { "\(prefix)/\(gateway)/status" }

    /// The topic of `record`.
    func topic(for record: HealthRecord) -> String {
        let device = record.device.flatMap { $0.localIdentifier ?? $0.name } ?? "unknown"
        let type = switch record {
        case .quantity(let sample): sample.type.identifier
        case .heartbeatSeries: "heartbeatSeries"
        case .workout: "workout"
        case .correlation(let correlation): correlation.type.identifier
        }
        return "\(prefix)/\(gateway)/\(Self.level(device))/\(Self.level(type))"
    }

    static func level(_ text: String) -> String {
        let cleaned = String(text.map { $0 == "/" || $0 == "+" || $0 == "#" || $0 == "\0" ? "_" : $0 })
        return cleaned.isEmpty ? "_" : cleaned
    }

    /// The body of a batch whose records were just taken from the bus (`samples[i]` is
    /// `records[i]`'s record).
    func body(for records: [OutboxRecord], samples: [HealthRecord]) -> OutboxBody {
        body(for: zip(records, samples).map { ($0, topic(for: $1)) }, unusable: [])
    }

    /// The body of stored records (a batch formed from dead letters moved back): each record's
    /// HealthJSON is decoded for its topic; one that does not decode is left out as unusable.
    func body(for records: [OutboxRecord]) -> OutboxBody {
        let decoder = HealthJSON.makeDecoder()
        var routed: [(OutboxRecord, String)] = []
        var unusable: [OutboxRecord] = []
        for record in records {
            if let sample = Self.decode(record, decoder) {
                routed.append((record, topic(for: sample)))
            } else {
                unusable.append(record)
            }
        }
        return body(for: routed, unusable: unusable)
    }

    private static func decode(_ record: OutboxRecord, _ decoder: JSONDecoder) -> HealthRecord? {
        let data = Data(record.payload)
        return switch record.kind {
        case .quantity: (try? decoder.decode(QuantitySample.self, from: data)).map(HealthRecord.quantity)
        case .heartbeatSeries: (try? decoder.decode(HeartbeatSeriesSample.self, from: data)).map(HealthRecord.heartbeatSeries)
        case .workout: (try? decoder.decode(Workout.self, from: data)).map(HealthRecord.workout)
        case .correlation: (try? decoder.decode(CorrelationSample.self, from: data)).map(HealthRecord.correlation)
        }
    }

    private func body(for routed: [(OutboxRecord, String)], unusable: [OutboxRecord]) -> OutboxBody {
        var messages: [MQTTMessage] = []
        switch mode {
        case .record:
            messages = routed.map { MQTTMessage(topic: $1, uuids: ["\($0.id)"], payload: $0.payload) }
        case .batch:
            var index: [String: Int] = [:]
            for (record, topic) in routed {
                if let position = index[topic] {
                    messages[position].uuids.append("\(record.id)")
                    messages[position].payload.append(UInt8(ascii: ","))
                    messages[position].payload.append(contentsOf: record.payload)
                } else {
                    index[topic] = messages.count
                    messages.append(MQTTMessage(topic: topic, uuids: ["\(record.id)"], payload: [UInt8(ascii: "[")] + record.payload))
                }
            }
            for position in messages.indices { messages[position].payload.append(UInt8(ascii: "]")) }
        }
        return OutboxBody(bytes: MQTTMessageFraming.encode(messages), contentEncoding: nil, unusable: unusable)
    }
}

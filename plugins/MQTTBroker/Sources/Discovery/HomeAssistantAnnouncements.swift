import HealthModel
import HealthStore
import RemoteSinkKit
import Synchronization

/// Which Home Assistant discovery configs the sink publishes with each batch: a sensor's config
/// the first time the connection carries its device and type (again when its config changes, a
/// unit or a firmware version), and an empty config, which removes the sensor, when a deletion
/// leaves the store with no record of its device and type, or of its person and type (a
/// `participant erase` removes the person's sensors).
///
/// The configs are retained on the broker, so nothing about them is kept but what this
/// connection has carried: a new connection (a restart, a reconnect) announces each sensor again
/// with its next record, and a removal is decided from the deletion and the store alone.
/// Thread-safe: the follower may send several batches at once.
final class HomeAssistantAnnouncements: Sendable {
    let discovery: HomeAssistantDiscovery
    let store: HealthStore

    private struct State {
        var connection = -1
        /// Config topic → the sensor whose config this connection carried.
        var announced: [String: HomeAssistantDiscovery.Sensor] = [:]
        /// The records' sources whose sensors this connection has derived.
        var sources: Set<HomeAssistantDiscovery.Source> = []
    }
    private let state = Mutex(State())

    init(discovery: HomeAssistantDiscovery, store: HealthStore) {
        self.discovery = discovery
        self.store = store
    }

    /// What a batch adds: configs to publish (retained) before its records, and what they change
    /// once delivered.
    struct Plan: Sendable {
        var messages: [MQTTMessage] = []
        var announced: [String: HomeAssistantDiscovery.Sensor] = [:]
        var removed: Set<String> = []
        var sources: Set<HomeAssistantDiscovery.Source> = []
        /// Devices whose sources are forgotten: a sensor of theirs went, so their next records
        /// are looked at again.
        var forgotten: Set<String> = []
        /// People whose sources are forgotten: a sensor of theirs went.
        var forgottenPersons: Set<String> = []
    }

    /// The discovery messages `batch` needs on connection number `connection`.
    /// - Throws: ``StoreError`` when the store cannot say whether a deleted device and type
    ///   still has records (the batch is then retried).
    func plan(for batch: FollowerBatch, connection: Int) async throws(StoreError) -> Plan {
        var (known, sources) = state.withLock { state in
            if state.connection != connection {
                state.connection = connection
                state.announced = [:]
                state.sources = []
            }
            return (state.announced, state.sources)
        }
        var plan = Plan()
        var emptied: [(device: String, type: String)] = []
        var emptiedPersons: [(person: String, type: String)] = []
        for change in batch.changes {
            switch change {
            case .stored(let record, _):
                guard let source = discovery.source(of: record), sources.insert(source).inserted else { continue }
                plan.sources.insert(source)
                for sensor in discovery.sensors(for: record) where known[sensor.configTopic] != sensor {
                    // A battery rides on the first type that carries it; moving it at every record
                    // of another type would rewrite its config each time.
                    if sensor.configTopic.hasSuffix("_\(HomeAssistantDiscovery.batteryType)/config"), known[sensor.configTopic] != nil {
                        continue
                    }
                    known[sensor.configTopic] = sensor
                    plan.announced[sensor.configTopic] = sensor
                    plan.messages.append(MQTTMessage(topic: sensor.configTopic, uuids: [], payload: sensor.payload))
                }
            case .deleted(let deletion):
                if let person = deletion.person, discovery.announces(type: deletion.type),
                    !emptiedPersons.contains(where: { $0.person == person && $0.type == deletion.type })
                {
                    emptiedPersons.append((person, deletion.type))
                }
                guard let device = deletion.device, discovery.announces(type: deletion.type),
                    !emptied.contains(where: { $0.device == device && $0.type == deletion.type })
                else { continue }
                emptied.append((device, deletion.type))
            }
        }
        // Removes the sensors of `topics` (an empty retained config each).
        func remove(_ topics: [String]) {
            for topic in topics where !plan.removed.contains(topic) {
                known[topic] = nil
                plan.announced[topic] = nil
                plan.removed.insert(topic)
                plan.messages.append(MQTTMessage(topic: topic, uuids: [], payload: []))
            }
        }
        for (device, type) in emptied where try await !store.holdsRecords(device: device, type: type) {
            plan.forgotten.insert(device)
            plan.sources = plan.sources.filter { MQTTMessageEncoder.deviceLevel($0.device) != device }
            var topics = discovery.removals(device: device, type: type)
            let battery = discovery.batteryConfigTopic(device: device)
            if try await !store.holdsRecords(device: device, type: nil) {
                topics.append(battery)
            } else if let sensor = known[battery], sensor.stateTopic == discovery.stateTopic(device: device, type: type) {
                // Its values came on the emptied topic: the next record that carries it
                // announces it again, on that record's topic.
                known[battery] = nil
                plan.removed.insert(battery)
                plan.announced[battery] = nil
            }
            remove(topics)
        }
        for (person, type) in emptiedPersons where try await !store.holdsRecords(person: person, type: type) {
            // The person's sources are derived again from their next record, if any.
            plan.sources = plan.sources.filter { $0.person != person }
            plan.forgottenPersons.insert(person)
            remove(discovery.removals(person: person, type: type))
        }
        return plan
    }

    /// The broker acknowledged `plan`'s messages on connection `connection`.
    func delivered(_ plan: Plan, connection: Int) {
        state.withLock { state in
            guard state.connection == connection else { return }
            for topic in plan.removed { state.announced[topic] = nil }
            state.announced.merge(plan.announced) { _, new in new }
            if !plan.forgotten.isEmpty {
                state.sources = state.sources.filter { !plan.forgotten.contains(MQTTMessageEncoder.deviceLevel($0.device)) }
            }
            if !plan.forgottenPersons.isEmpty {
                state.sources = state.sources.filter { $0.person.map { !plan.forgottenPersons.contains($0) } ?? true }
            }
            state.sources.formUnion(plan.sources)
        }
    }
}

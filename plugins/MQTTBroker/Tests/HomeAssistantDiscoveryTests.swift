import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import MQTTBroker
import RemoteSinkKit
import GatewayRuntime
import SampleBus
import XCTest

/// Home Assistant's MQTT discovery against a real `mosquitto`: every config is read back by a
/// subscriber and checked as Home Assistant reads it (check_home_assistant_discovery.py renders
/// each value_template with Jinja2 on the values its state topic carried), and forgetting a
/// device removes its configs from the broker.
final class HomeAssistantDiscoveryTests: BrokerAndStoreTestCase {
    let ids = SampleIDGenerator(seed: 23)
    let date = Date(timeIntervalSince1970: 1_800_000_000)

    let strap = Device(
        name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "3.1.1",
        localIdentifier: "A0:9E:1A:00:11:22")
    let station = Device(name: "Health station", manufacturer: "Lab", model: "HS-1", localIdentifier: "F0:F1:F2:F3:F4:F5")
    let bike = Device(name: "Trainer", manufacturer: "Lab", model: "Bike", localIdentifier: "C0:C1:C2:C3:C4:C5")

    func sample(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, _ device: Device, battery: Int64? = nil, at offset: Double = 0)
        throws -> HealthRecord
    {
        var metadata = Metadata()
        metadata[MetadataKey("healthgate.version")] = .string("0.1.0")
        if let battery { metadata[MetadataKey("healthgate.batteryLevel")] = .integer(battery) }
        let start = date.addingTimeInterval(offset)
        return .quantity(try QuantitySample(
            id: ids.next(), type: type, quantity: Quantity(value, unit), start: start, end: start, device: device, metadata: metadata))
    }

    /// `record` (a quantity sample) as the store keeps it attributed to `person`.
    func attributed(_ record: HealthRecord, to person: String) throws -> HealthRecord {
        guard case .quantity(let sample) = record else { return record }
        var metadata = sample.metadata
        metadata[.person] = .string(person)
        return .quantity(try QuantitySample(
            id: ids.next(), type: sample.type, quantity: sample.quantity, start: sample.startDate, end: sample.endDate,
            device: sample.device, metadata: metadata))
    }

    func bloodPressure(_ systolic: Double, _ diastolic: Double) throws -> HealthRecord {
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: date, end: date, device: station)
        }
        return .correlation(try .bloodPressure(
            id: ids.next(), systolic: try member(.bloodPressureSystolic, systolic),
            diastolic: try member(.bloodPressureDiastolic, diastolic), device: station))
    }

    /// One of each kind the issue names: heart rate and battery, weight, blood pressure, SpO₂,
    /// temperature, glucose, power, cadence, steps, and heart-rate variability.
    func records() throws -> [HealthRecord] {
        [
            try sample(.heartRate, 71, .countPerMinute, strap, battery: 88),
            try sample(.heartRate, 74, .countPerMinute, strap, battery: 87, at: 1),
            try sample(.heartRateVariabilitySDNN, 48.5, .millisecond, strap),
            try sample(.stepCount, 12, .count, strap),
            try sample(.bodyMass, 71.4, .kilogram, station, battery: 91),
            try bloodPressure(121, 79),
            try sample(.oxygenSaturation, 97, .percent, station),
            try sample(.bodyTemperature, 36.8, .degreeCelsius, station),
            try sample(.bloodGlucose, 104, .milligramPerDeciliter, station),
            try sample(.cyclingPower, 212, .watt, bike),
            try sample(.cyclingCadence, 88, .countPerMinute, bike),
        ]
    }

    struct Sensor: Decodable {
        var unique_id: String
        var state: Double
        var unit: String?
        var device_class: String?
        var device: String
        var config_topic: String
    }

    /// What a subscriber to `filter` that connects now receives: the retained messages.
    func retained(_ filter: String, name: String) async throws -> [MQTTRecorder.Message] {
        let probe = filter == "#" ? "probe/\(name)" : filter.replacingOccurrences(of: "#", with: "probe/\(name)")
        let late = try MQTTRecorder(broker: broker, filter: filter, name: name)
        defer { late.stop() }
        // The broker sends the retained messages right after the SUBACK, before the probe.
        try await late.waitUntilSubscribed(broker: broker, probe: probe)
        return late.messages.filter(\.retained)
    }

    /// Runs the independent check over what `recorder` saw and what the broker retained.
    func check(_ recorder: MQTTRecorder) async throws -> [Sensor] {
        func json(_ messages: [MQTTRecorder.Message]) -> [[String: Any]] {
            messages.map { ["topic": $0.topic, "payload": $0.payload, "retained": $0.retained] }
        }
        let retained = try await retained("#", name: "late-check")
        let input = try JSONSerialization.data(
            withJSONObject: ["messages": json(recorder.messages), "retained": json(retained), "prefix": "homeassistant"])
        let result = try await TestPython.run("plugins/MQTTBroker/Fixtures/check_home_assistant_discovery.py", input: input)
        XCTAssertEqual(result.status, 0, "the discovery check failed:\n\(result.errors)")
        return try result.output.split(separator: "\n").map { try JSONDecoder().decode(Sensor.self, from: Data($0.utf8)) }
    }

    func start(
        _ mode: MQTTMessageMode, quantitySeries: QuantitySeriesForm = .series, participants: [ParticipantCharacteristics] = []
    ) async throws -> (task: Task<Void, any Error>, status: StatusReporter, shutdown: ShutdownSignal) {
        var environment = TestEnvironment.make(name: "broker", clock: SystemClock(), directory: directory, store: store)
        environment.gatewayName = "gym-1"
        environment.participants = participants
        var configuration = MQTTBrokerConfiguration(host: "127.0.0.1").with { $0.port = broker.port; $0.messages = mode; $0.batchSize = 5; $0.maxInFlight = 1 }
        configuration.homeAssistantDiscovery = true
        configuration.quantitySeries = quantitySeries
        configuration.retry = RetryConfiguration(initialDelaySeconds: 0.05, maxDelaySeconds: 1, jitter: 0.2)
        configuration.ackTimeoutSeconds = 5
        let sink = try MQTTBrokerSink(settings: configuration.validated(in: environment), environment: environment)
        let status = StatusBoard().register(name: "broker", kind: MQTTBrokerSink.kind, role: .sink)
        let shutdown = ShutdownSignal()
        let context = FollowerContext(
            logger: environment.logger, clock: SystemClock(), status: status, stopRequest: StopRequest(shutdown), storeSettled: { true })
        return (Task { try await sink.run(context: context) }, status, shutdown)
    }

    /// Waits until the sink's cursor reached the store's latest anchor.
    func waitUntilCaughtUp(_ what: String) async throws {
        let store: HealthStore = store
        try await waitUntil(timeout: .seconds(30), what) {
            let latest = try await store.logBounds().latest
            return try await store.follower("broker")?.anchor == latest
        }
    }

    func testEveryQuantityOfEveryDeviceIsAnnouncedAndReadsAsANumber() async throws {
        try await announceAndCheck(.record)
    }

    func testBatchMessagesAreReadFromTheirNewestRecord() async throws {
        try await announceAndCheck(.batch)
    }

    func announceAndCheck(_ mode: MQTTMessageMode) async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "#", name: "all")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "probe")
        let (task, _, shutdown) = try await start(mode)
        // The two heart rates carry other battery levels: two series, the newest written last.
        let records = try records()
        try await store.write([records[0]])
        try await store.write(Array(records.dropFirst()))
        try await waitUntilCaughtUp("every record acknowledged")
        let sensors = try await check(recorder)
        shutdown.requestStop()
        try await task.value

        let byTopic = Dictionary(uniqueKeysWithValues: sensors.map { ($0.config_topic, $0) })
        func sensor(_ object: String) -> Sensor? { byTopic["homeassistant/sensor/healthgate_gym-1/\(object)/config"] }
        XCTAssertEqual(sensor("A0_9E_1A_00_11_22_heartRate")?.state, 74, "the newest heart rate, the last quantity of its series")
        XCTAssertEqual(sensor("A0_9E_1A_00_11_22_heartRate")?.unit, "bpm")
        XCTAssertEqual(sensor("A0_9E_1A_00_11_22_battery")?.state, 87)
        XCTAssertEqual(sensor("A0_9E_1A_00_11_22_battery")?.device_class, "battery")
        XCTAssertEqual(sensor("A0_9E_1A_00_11_22_heartRateVariabilitySDNN")?.unit, "ms")
        XCTAssertEqual(sensor("A0_9E_1A_00_11_22_stepCount")?.state, 12)
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_bodyMass")?.state, 71.4)
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_bodyMass")?.device_class, "weight")
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_bloodPressureSystolic")?.state, 121)
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_bloodPressureDiastolic")?.state, 79)
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_bloodPressureDiastolic")?.unit, "mmHg")
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_oxygenSaturation")?.state, 97)
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_bodyTemperature")?.unit, "°C")
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_bloodGlucose")?.device_class, "blood_glucose_concentration")
        XCTAssertEqual(sensor("F0_F1_F2_F3_F4_F5_battery")?.state, 91)
        XCTAssertEqual(sensor("C0_C1_C2_C3_C4_C5_cyclingPower")?.state, 212)
        XCTAssertEqual(sensor("C0_C1_C2_C3_C4_C5_cyclingCadence")?.unit, "rpm")
        XCTAssertEqual(sensors.count, 13, "one sensor per device and quantity, and each battery: \(sensors.map(\.unique_id))")
        XCTAssertEqual(Set(sensors.filter { $0.config_topic.contains("A0_9E") }.map(\.device)), ["Polar H10 1A2B3C4D"])
        let heartRateConfigs = recorder.messages.filter { $0.topic.hasSuffix("A0_9E_1A_00_11_22_heartRate/config") }
        XCTAssertEqual(heartRateConfigs.count, 1, "announced once per connection, not per record")
    }

    /// Issue 65: each person is a device of their own in Home Assistant, with a sensor per
    /// quantity on their topic (`identifiers.mqttTopic`, else their name), beside the devices'.
    func testEachPersonIsADeviceWithTheirReadingsSensors() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "#", name: "all")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "probe")
        let people = [
            ParticipantCharacteristics(name: "Ana Lima", devices: [], characteristics: UserCharacteristics(), mqttTopic: "ana-7"),
            ParticipantCharacteristics(name: "Ben", devices: [], characteristics: UserCharacteristics()),
        ]
        let (task, _, shutdown) = try await start(.record, participants: people)
        try await store.write([
            try attributed(try sample(.bodyMass, 61.2, .kilogram, station), to: "Ana Lima"),
            try attributed(try sample(.bodyMass, 80.4, .kilogram, station, at: 60), to: "Ben"),
            try attributed(try sample(.heartRate, 71, .countPerMinute, strap, battery: 88, at: 90), to: "Ana Lima"),
        ])
        try await waitUntilCaughtUp("every record acknowledged")
        let sensors = try await check(recorder)
        shutdown.requestStop()
        try await task.value

        let byID = Dictionary(uniqueKeysWithValues: sensors.map { ($0.unique_id, $0) })
        XCTAssertEqual(byID["healthgate_gym-1_person_ana-7_bodyMass"]?.state, 61.2)
        XCTAssertEqual(byID["healthgate_gym-1_person_ana-7_bodyMass"]?.device, "Ana Lima")
        XCTAssertEqual(byID["healthgate_gym-1_person_ana-7_heartRate"]?.state, 71)
        XCTAssertEqual(byID["healthgate_gym-1_person_Ben_bodyMass"]?.state, 80.4)
        XCTAssertEqual(byID["healthgate_gym-1_F0_F1_F2_F3_F4_F5_bodyMass"]?.state, 80.4, "the scale's own sensor: its latest weighing")
        XCTAssertNil(byID["healthgate_gym-1_person_ana-7_battery"], "a battery is the device's, not the person's")
        XCTAssertEqual(sensors.count, 6, "\(sensors.map(\.unique_id))")
        XCTAssertTrue(recorder.messages.contains { $0.topic == "healthgate/gym-1/people/ana-7/bodyMass" })
        XCTAssertFalse(recorder.messages.contains { $0.topic.hasPrefix("healthgate/gym-1/people/Ana Lima/") }, "the topic, not the name")
    }

    /// Issue 77: `participant erase` removes the person's sensors (their retained configs) once
    /// the store holds nothing of theirs, also when the erase ran while the sink was stopped;
    /// another person's stay.
    func testErasingAPersonRemovesTheirSensors() async throws {
        let people = [
            ParticipantCharacteristics(name: "Ana Lima", devices: [], characteristics: UserCharacteristics(), mqttTopic: "ana-7"),
            ParticipantCharacteristics(name: "Ben", devices: [], characteristics: UserCharacteristics()),
        ]
        let first = try await start(.record, participants: people)
        try await store.write([
            try attributed(try sample(.bodyMass, 61.2, .kilogram, station), to: "Ana Lima"),
            try attributed(try sample(.bodyMass, 80.4, .kilogram, station, at: 60), to: "Ben"),
            try attributed(try sample(.heartRate, 71, .countPerMinute, strap, at: 90), to: "Ana Lima"),
        ])
        try await waitUntilCaughtUp("every record acknowledged")
        first.shutdown.requestStop()
        try await first.task.value
        var configs = Set(try await retained("homeassistant/#", name: "before").map(\.topic))
        XCTAssertEqual(configs.filter { $0.contains("person_ana-7") }.count, 2, "\(configs.sorted())")

        let erased = try await store.delete(.person("Ana Lima"))
        XCTAssertEqual(erased.count, 2)
        let second = try await start(.record, participants: people)
        try await waitUntilCaughtUp("the erase acknowledged")
        second.shutdown.requestStop()
        try await second.task.value
        configs = Set(try await retained("homeassistant/#", name: "after").map(\.topic))
        XCTAssertEqual(configs.filter { $0.contains("person_ana-7") }, [], "no sensor of Ana's: \(configs.sorted())")
        XCTAssertTrue(configs.contains("homeassistant/sensor/healthgate_gym-1/person_Ben_bodyMass/config"), "\(configs.sorted())")
        XCTAssertTrue(configs.contains("homeassistant/sensor/healthgate_gym-1/F0_F1_F2_F3_F4_F5_bodyMass/config"), "Ben's weighing stays")
    }

    /// A strap's heart rates are a series: the sensor shows its last quantity, the latest
    /// reading, as it grows. In `expand` a series is published once closed, so the sensor shows
    /// the last quantity of the newest closed series.
    func testTheHeartRateSensorShowsTheLatestReadingOfASeries() async throws {
        let state = try await heartRateSensor(.series)
        XCTAssertEqual(state, 80)
    }

    func testTheHeartRateSensorShowsTheLatestClosedReadingInExpand() async throws {
        let state = try await heartRateSensor(.expand)
        XCTAssertEqual(state, 73)
    }

    /// The state Home Assistant's template gives the strap's heart-rate sensor after three
    /// readings a second apart, then one 28 s later (which closes their series and starts another).
    func heartRateSensor(_ form: QuantitySeriesForm) async throws -> Double? {
        let recorder = try MQTTRecorder(broker: broker, filter: "#", name: "all")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "probe")
        let (task, _, shutdown) = try await start(.record, quantitySeries: form)
        for (bpm, offset) in [(71.0, 0.0), (72, 1), (73, 2), (80, 30)] {
            try await store.write([try sample(.heartRate, bpm, .countPerMinute, strap, at: offset)])
            try await waitUntilCaughtUp("the reading at \(offset) s acknowledged")
        }
        let sensors = try await check(recorder)
        shutdown.requestStop()
        try await task.value
        XCTAssertEqual(sensors.map(\.unique_id), ["healthgate_gym-1_A0_9E_1A_00_11_22_heartRate"])
        return sensors.first?.state
    }

    func testForgettingADeviceRemovesItsSensorsAndKeepsTheOthers() async throws {
        let (task, _, shutdown) = try await start(.record)
        let records = try records()
        try await store.write(records)
        try await waitUntilCaughtUp("every record acknowledged")

        // Deleting one heart rate leaves another: nothing is removed.
        let recorder = try MQTTRecorder(broker: broker, filter: "homeassistant/#", name: "removals")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "homeassistant/probe")
        let deleted = try await store.delete(.ids([records[0].id]))
        XCTAssertEqual(deleted.map(\.id), [records[0].id])
        try await waitUntilCaughtUp("the deletion acknowledged")
        XCTAssertFalse(recorder.messages.contains { $0.payload.isEmpty }, "a heart rate remains: nothing removed: \(recorder.messages)")
        // The strap forgotten: every record of it deleted.
        let strap = try await store.delete(.device("A0:9E:1A:00:11:22", from: .distantPast, to: .distantFuture))
        XCTAssertFalse(strap.isEmpty, "the strap's records deleted")
        try await waitUntilCaughtUp("the strap's deletion acknowledged")
        try await waitUntil(timeout: .seconds(30), "the strap's sensors removed") {
            Set(recorder.messages.filter { $0.topic.contains("A0_9E_1A_00_11_22") && $0.payload.isEmpty }.map(\.topic)).count == 4
        }
        shutdown.requestStop()
        try await task.value

        // What a Home Assistant that connects now finds: the retained configs.
        let retained = Set(try await retained("homeassistant/#", name: "late").map(\.topic))
        XCTAssertFalse(retained.contains { $0.contains("A0_9E_1A_00_11_22") }, "no sensor of the forgotten strap: \(retained.sorted())")
        XCTAssertEqual(retained.count, 9, "the station's 7 sensors (its battery among them) and the bike's 2 stay: \(retained.sorted())")
        let removals = recorder.messages.filter { $0.payload.isEmpty && $0.topic.hasSuffix("/config") }.map(\.topic)
        XCTAssertEqual(removals.count, 4, "each sensor removed once: \(removals)")
        let removed = Set(removals)
        XCTAssertEqual(removed, Set(["heartRate", "heartRateVariabilitySDNN", "stepCount", "battery"].map {
            "homeassistant/sensor/healthgate_gym-1/A0_9E_1A_00_11_22_\($0)/config"
        }))
    }

    /// A device forgotten while the gateway was stopped: the tombstones name it, so the sink
    /// that starts next removes its sensors, though nothing of its earlier run survived.
    func testADeviceForgottenWhileTheSinkWasStoppedIsRemovedAtTheNextStart() async throws {
        let first = try await start(.record)
        try await store.write(try records())
        try await waitUntilCaughtUp("every record acknowledged")
        first.shutdown.requestStop()
        try await first.task.value

        let bike = try await store.delete(.device("C0:C1:C2:C3:C4:C5", from: .distantPast, to: .distantFuture))
        XCTAssertFalse(bike.isEmpty, "the bike's records deleted")
        let second = try await start(.record)
        try await waitUntilCaughtUp("the deletions acknowledged")
        second.shutdown.requestStop()
        try await second.task.value

        let retained = Set(try await retained("homeassistant/#", name: "after-restart").map(\.topic))
        XCTAssertFalse(retained.contains { $0.contains("C0_C1_C2_C3_C4_C5") }, "the bike's sensors are gone: \(retained.sorted())")
        XCTAssertEqual(retained.count, 11, "the strap's 4 and the station's 7 stay: \(retained.sorted())")
    }

    func testTheDiscoveryKeysAreCheckedAndOffByDefault() throws {
        XCTAssertFalse(MQTTBrokerConfiguration(host: "broker").homeAssistantDiscovery)
        XCTAssertEqual(MQTTBrokerConfiguration(host: "broker").homeAssistantPrefix, "homeassistant")
        var configuration = MQTTBrokerConfiguration(host: "broker")
        configuration.homeAssistantPrefix = "ha/#"
        XCTAssertThrowsError(try configuration.validated()) { error in
            XCTAssertTrue("\(error)".contains("homeAssistantPrefix"), "\(error)")
        }
    }

    func testNamesAreReadable() {
        XCTAssertEqual(HomeAssistantDiscovery.words("heartRateVariabilitySDNN"), "Heart rate variability SDNN")
        XCTAssertEqual(HomeAssistantDiscovery.words("oxygenSaturation"), "Oxygen saturation")
        XCTAssertEqual(HomeAssistantDiscovery.objectID("Polar H10 1A2B/x+#"), "Polar_H10_1A2B_x__")
    }
}

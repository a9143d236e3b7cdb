import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// Samples and statistics narrowed by device and metadata, against values computed by hand.
final class SampleFilterTests: StoreTestCase {
    let garmin = Device(name: "Garmin HRM", manufacturer: "Garmin", model: "HRM-Pro", localIdentifier: "11:22:33:44:55:66")
    var polarSamples: [QuantitySample] = []
    var garminSamples: [QuantitySample] = []

    func metadata(user: Int64, running: Bool, load: Double) -> Metadata {
        var metadata = Metadata()
        // Provenance as `healthgate run` stamps it: each strap has its own source instance, both
        // on one gateway.
        metadata[.sourceName] = .string(user == 1 ? "polar-strap" : "garmin-strap")
        metadata[.gatewayName] = .string("gym-1")
        metadata[MetadataKey("healthgate.userIndex")] = .integer(user)
        metadata[MetadataKey("test.running")] = .bool(running)
        metadata[MetadataKey("test.load")] = .double(load)
        return metadata
    }

    override func setUp() async throws {
        try await super.setUp()
        let ids = makeIDs()
        // Polar (strap): 60 at 0 s, 80 at 10 s, user 1. Garmin: 100 at 5 s, 120 at 15 s, user 2;
        // only the one at 15 s is running, with a load of 0.5.
        polarSamples = [
            try heartRate(ids, 60, at: 0, metadata: metadata(user: 1, running: false, load: 1)),
            try heartRate(ids, 80, at: 10, metadata: metadata(user: 1, running: false, load: 1)),
        ]
        garminSamples = [
            try heartRate(ids, 100, at: 5, device: garmin, metadata: metadata(user: 2, running: false, load: 1)),
            try heartRate(ids, 120, at: 15, device: garmin, metadata: metadata(user: 2, running: true, load: 0.5)),
        ]
        // Steps: pedometer A 100 over [0 s, 60 s), pedometer B 50 over [30 s, 90 s).
        let stepsA = try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(100, .count), start: at(0), end: at(60),
            device: Device(name: "pedometer", manufacturer: "Omron", localIdentifier: "usb-A"))
        let stepsB = try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(50, .count), start: at(30), end: at(90),
            device: Device(name: "pedometer", manufacturer: "Omron", localIdentifier: "usb-B"))
        try await HealthStore(path: path).write(
            (polarSamples + garminSamples).map(HealthRecord.quantity) + [.quantity(stepsA), .quantity(stepsB)])
    }

    /// What a query reads of ``polarSamples``: one quantity series (one device and metadata).
    func polarStored() throws -> [QuantitySample] { try storedQuantities(polarSamples) }

    /// What a query reads of ``garminSamples``: two series, their metadata differ.
    func garminStored() throws -> [QuantitySample] {
        try storedQuantities([garminSamples[0]]) + storedQuantities([garminSamples[1]])
    }

    func testSamplesByDeviceFieldsAndMetadata() async throws {
        let garminSamples = try garminStored()
        let polarSamples = try polarStored()
        let store = try HealthStore(path: path, access: .readOnly)
        let byName = try await store.samples(of: .heartRate, filter: SampleFilter(deviceName: "Garmin HRM"))
        XCTAssertEqual(byName, garminSamples)
        let byAddress = try await store.samples(of: .heartRate, filter: SampleFilter(localIdentifier: "AA:BB:CC:DD:EE:FF"))
        XCTAssertEqual(byAddress, polarSamples)
        let byMaker = try await store.samples(of: .heartRate, filter: SampleFilter(manufacturer: "Polar", model: "H10"))
        XCTAssertEqual(byMaker, polarSamples)
        let mismatch = try await store.samples(of: .heartRate, filter: SampleFilter(manufacturer: "Polar", model: "HRM-Pro"))
        XCTAssertEqual(mismatch, [], "every field must match")
        let user2 = try await store.samples(of: .heartRate, filter: SampleFilter(metadata: ["healthgate.userIndex": "2"]))
        XCTAssertEqual(user2, garminSamples)
        let running = try await store.samples(
            of: .heartRate, filter: SampleFilter(metadata: ["test.running": "true", "test.load": "0.5"]))
        XCTAssertEqual(running, [garminSamples[1]])
        let newestPolar = try await store.samples(
            of: .heartRate, limit: 1, order: .descending, filter: SampleFilter(deviceName: "Polar H10"))
        XCTAssertEqual(newestPolar, [polarSamples[1]])
    }

    func testStatisticsByDeviceAndMetadata() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let all = try await store.statistics(of: .heartRate, from: t0, to: at(60))
        XCTAssertEqual(all.average, 90)  // (60 + 80 + 100 + 120) / 4
        let polar = try await store.statistics(of: .heartRate, from: t0, to: at(60), filter: SampleFilter(deviceName: "Polar H10"))
        XCTAssertEqual(polar.average, 70)
        XCTAssertEqual(polar.minimum, 60)
        XCTAssertEqual(polar.maximum, 80)
        XCTAssertEqual(polar.mostRecent, 80)
        XCTAssertEqual(polar.sampleCount, 2)
        let user2 = try await store.statistics(
            of: .heartRate, from: t0, to: at(60), filter: SampleFilter(metadata: ["healthgate.userIndex": "2"]))
        XCTAssertEqual(user2.average, 110)
        let none = try await store.statistics(
            of: .heartRate, from: t0, to: at(60),
            filter: SampleFilter(localIdentifier: "11:22:33:44:55:66", metadata: ["healthgate.userIndex": "1"]))
        XCTAssertEqual(none.sampleCount, 0)
        XCTAssertNil(none.average)
        // 10-second buckets of the Garmin: [0, 10) holds 100, [10, 20) holds 120.
        let buckets = try await store.statisticsCollection(
            of: .heartRate, from: t0, to: at(20), anchor: t0, interval: .seconds(10), filter: SampleFilter(model: "HRM-Pro"))
        XCTAssertEqual(buckets.map(\.average), [100, 120])

        // Steps in minutes: all = [100 + 25, 25]; pedometer B alone = [25, 25] (50 over 60 s, half in each).
        let steps = try await store.statisticsCollection(
            of: .stepCount, from: t0, to: at(120), anchor: t0, interval: .seconds(60))
        XCTAssertEqual(steps.map(\.sum), [125, 25])
        let stepsB = try await store.statisticsCollection(
            of: .stepCount, from: t0, to: at(120), anchor: t0, interval: .seconds(60),
            filter: SampleFilter(localIdentifier: "usb-B"))
        XCTAssertEqual(stepsB.map(\.sum), [25, 25])
        let omronDays = try await store.statisticsCollection(
            of: .stepCount, from: t0, to: at(120), anchor: t0, interval: CalendarInterval(.day),
            timeZone: TimeZone(identifier: "UTC")!, filter: SampleFilter(manufacturer: "Omron"))
        XCTAssertEqual(omronDays.map(\.sum), [150])
    }

    func testCommandLineFilters() async throws {
        let healthgate = try HealthgateExecutable()
        defer { try? FileManager.default.removeItem(at: healthgate.root) }
        let stats = try await healthgate.run([
            "query", "stats", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-17",
            "--device-name", "Garmin HRM", "--format", "json",
        ])
        XCTAssertEqual(stats.status, 0, stats.standardError)
        let decoded = try HealthJSON.makeDecoder().decode(QuantityStatistics.self, from: Data(stats.standardOutput.utf8))
        XCTAssertEqual(decoded.average, 110)
        let samples = try await healthgate.run([
            "query", "samples", "--type", "heartRate", "--db", path, "--metadata", "test.running=true",
            "--metadata", "healthgate.userIndex=2", "--format", "json",
        ])
        XCTAssertEqual(samples.status, 0, samples.standardError)
        let found = try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(samples.standardOutput.utf8))
        // The quantity of the Garmin's second series, with its derived id and value.
        XCTAssertEqual(found.map(\.id), [try garminStored()[1].id])
        XCTAssertEqual(found.map(\.quantity), [garminSamples[1].quantity])
        // By provenance: --source and --gateway are the metadata entries the gateway stamps.
        let bySource = try await healthgate.run([
            "query", "stats", "--type", "heartRate", "--db", path, "--since", "2027-01-16", "--time-zone", "UTC", "--until", "2027-01-17",
            "--source", "polar-strap", "--gateway", "gym-1", "--format", "json",
        ])
        XCTAssertEqual(bySource.status, 0, bySource.standardError)
        let polar = try HealthJSON.makeDecoder().decode(QuantityStatistics.self, from: Data(bySource.standardOutput.utf8))
        XCTAssertEqual(polar.sampleCount, 2)
        XCTAssertEqual(polar.average, 70)  // (60 + 80) / 2
        let otherGateway = try await healthgate.run([
            "query", "samples", "--type", "heartRate", "--db", path, "--gateway", "gym-2", "--format", "json",
        ])
        XCTAssertEqual(otherGateway.status, 0, otherGateway.standardError)
        XCTAssertEqual(try HealthJSON.makeDecoder().decode([QuantitySample].self, from: Data(otherGateway.standardOutput.utf8)), [])
        let contradiction = try await healthgate.run([
            "query", "samples", "--type", "heartRate", "--db", path, "--source", "garmin-strap",
            "--metadata", "healthgate.source=polar-strap",
        ])
        XCTAssertEqual(contradiction.status, 64)
        XCTAssertTrue(
            contradiction.standardError.contains("--source garmin-strap contradicts --metadata healthgate.source=polar-strap"),
            contradiction.standardError)
        try await healthgate.assertRun(["query", "samples", "--type", "heartRate", "--db", path, "--metadata", "novalue"], exits: 64, saying: "--metadata expects KEY=VALUE")
    }
}

import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLite
import XCTest

/// Attribution as the store keeps it: a reading's person selects it in queries and statistics,
/// and the run-time assignments' intervals outlive the store's close.
final class AttributionStoreTests: StoreTestCase {
    let garmin = Device(name: "Garmin HRM", manufacturer: "Garmin", model: "HRM-Pro", localIdentifier: "11:22:33:44:55:66")

    /// Ana's strap (60 and 80), Ben's (100), a strap nobody wears (120), and Ana's and nobody's
    /// weighings: each selection finds exactly its readings, in samples and in statistics, and a
    /// person's series are apart from the unattributed readings of the same strap.
    func testAPersonsReadingsAndTheUnattributedOnes() async throws {
        let ids = makeIDs()
        let ana: Metadata = [.person: .string("Ana")], ben: Metadata = [.person: .string("Ben")]
        let readings = [
            try heartRate(ids, 60, at: 0, metadata: ana), try heartRate(ids, 80, at: 10, metadata: ana),
            try heartRate(ids, 100, at: 5, device: garmin, metadata: ben),
            // The same strap as Ana's, unattributed: a series of its own.
            try heartRate(ids, 120, at: 15),
        ]
        let weighings = try [(61.0, ana), (79.0, Metadata())].enumerated().map { index, weighing in
            try QuantitySample(
                id: ids.next(), type: .bodyMass, quantity: Quantity(weighing.0, .kilogram), start: at(Double(index)),
                end: at(Double(index)), device: Device(name: "MIBFS", localIdentifier: "C8:47:8C:01:02:03"), metadata: weighing.1)
        }
        try await HealthStore(path: path).write((readings + weighings).map(HealthRecord.quantity))

        let store = try HealthStore(path: path, access: .readOnly)
        func values(_ type: QuantityType, _ person: SampleFilter.PersonSelection) async throws -> [Double] {
            try await store.samples(of: type, filter: SampleFilter(person: person)).map(\.quantity.value)
        }
        let anas = try await values(.heartRate, .named("Ana"))
        XCTAssertEqual(anas, [60, 80])
        let bens = try await values(.heartRate, .named("Ben"))
        XCTAssertEqual(bens, [100])
        let nobodys = try await values(.heartRate, .unattributed)
        XCTAssertEqual(nobodys, [120])
        let cais = try await values(.heartRate, .named("Cai"))
        XCTAssertEqual(cais, [])
        let anasWeight = try await values(.bodyMass, .named("Ana"))
        XCTAssertEqual(anasWeight, [61])
        let nobodysWeight = try await values(.bodyMass, .unattributed)
        XCTAssertEqual(nobodysWeight, [79])
        // With a device filter: both must match.
        let anasOnGarmin = try await store.samples(of: .heartRate, filter: SampleFilter(deviceName: "Garmin HRM", person: .named("Ana")))
        XCTAssertEqual(anasOnGarmin, [])
        let stats = try await store.statistics(of: .heartRate, from: t0, to: at(60), filter: SampleFilter(person: .named("Ana")))
        XCTAssertEqual(stats.average, 70)
        XCTAssertEqual(stats.sampleCount, 2)
        let unattributed = try await store.statistics(of: .heartRate, from: t0, to: at(60), filter: SampleFilter(person: .unattributed))
        XCTAssertEqual(unattributed.average, 120)
        // Each reading carries its person back.
        let all = try await store.samples(of: .heartRate)
        XCTAssertEqual(all.map { HealthRecord.quantity($0).person }, ["Ana", "Ben", "Ana", nil])
    }

    /// An assignment begins an interval and ends the device's previous one; a freeing ends it;
    /// the intervals are read back after the store is closed and opened again.
    func testWearIntervalsOutliveTheStore() async throws {
        let store = try HealthStore(path: path)
        try store.storeParticipantAssignment(ParticipantAssignment(device: "AA:BB:CC:DD:EE:FF", participant: "Ana"), at: at(0))
        try store.storeParticipantAssignment(ParticipantAssignment(device: "11:22:33:44:55:66", participant: "Ben"), at: at(5))
        try store.storeParticipantAssignment(ParticipantAssignment(device: "AA:BB:CC:DD:EE:FF", participant: "Cai"), at: at(60))
        try store.removeParticipantAssignments(devices: ["AA:BB:CC:DD:EE:FF"], at: at(120))
        await store.close()
        let reopened = try HealthStore(path: path)
        let intervals = try reopened.storedWearIntervals()
        XCTAssertEqual(intervals, [
            WearInterval(device: "AA:BB:CC:DD:EE:FF", person: "Ana", start: at(0), end: at(60)),
            WearInterval(device: "11:22:33:44:55:66", person: "Ben", start: at(5)),
            WearInterval(device: "AA:BB:CC:DD:EE:FF", person: "Cai", start: at(60), end: at(120)),
        ])
        XCTAssertEqual(try reopened.storedParticipantAssignments().map(\.participant), ["Ben"])
        let rules = PersonAttribution(history: intervals)
        XCTAssertEqual(rules.attribute(device: strap, at: at(59)), .person("Ana"))
        XCTAssertEqual(rules.attribute(device: strap, at: at(61)), .person("Cai"))
        XCTAssertEqual(rules.attribute(device: strap, at: at(121)), .unattributed(.nobody))
        await reopened.close()
    }

    /// A store of version 17 turns the assignments that hold into intervals from when they were
    /// made: its readings after that are attributed as before the upgrade.
    func testTheUpgradeKeepsTheAssignmentsThatHoldAsIntervals() async throws {
        do {
            // Closed when it goes out of scope, before the store opens the file.
            let connection = try SQLiteConnection(path: path)
            try connection.migrate(Array(StoreSchema.migrations.prefix(17)))
            try connection.run(
                "INSERT INTO participant_devices (device, participant, assigned_us, until_class_end) VALUES ('AA:BB:CC:DD:EE:FF', 'Ana', ?1, 0)",
                [.integer(Int64(at(30).timeIntervalSince1970 * 1_000_000))])
        }
        let store = try HealthStore(path: path)
        XCTAssertEqual(try store.storedWearIntervals(), [WearInterval(device: "AA:BB:CC:DD:EE:FF", person: "Ana", start: at(30))])
        await store.close()
    }

    /// Issue 65, the upgrade: the readings stored before attribution get their person from what
    /// the store knows held then (a wear interval, a participant's workout with its devices), in
    /// batches that resume after the store is closed; a reading in nobody's interval, or one
    /// attributed already, stays as it is.
    func testTheUpgradeAttributesTheReadingsStoredBeforeAttributionInResumableBatches() async throws {
        let ids = makeIDs()
        let strap = StoreTestCase.strap, spare = Device(name: "Spare", localIdentifier: "C0:FF:EE:00:00:09")
        func reading(_ value: Double, at seconds: Double, _ device: Device, _ metadata: Metadata = [:]) throws -> HealthRecord {
            .quantity(try plainReading(ids, value, at: seconds, device: device, metadata: metadata))
        }
        let bensWorkout = Workout(
            id: ids.next(), activityType: .cycling, startDate: at(200), endDate: at(300), duration: 100,
            metadata: [.participant: .string("Ben"), .workoutDevices: .string("11:22:33:44:55:66")])
        do {
            let store = try HealthStore(path: path)
            try await store.write([
                try reading(1, at: 50, strap), try reading(2, at: 150, strap), try reading(3, at: 160, strap),
                try reading(4, at: 170, strap, [.person: .string("Cai")]), try reading(5, at: 250, garmin),
                try reading(6, at: 350, garmin), try reading(7, at: 150, spare), .workout(bensWorkout),
            ])
            try store.storeParticipantAssignment(
                ParticipantAssignment(device: strap.localIdentifier ?? "", participant: "Ana"), at: at(100))
            await store.close()
            // Back to version 18, as a store of the release before the upgrade.
            let connection = try SQLiteConnection(path: path)
            try connection.execute(
                "ALTER TABLE store_migrations DROP COLUMN through; DROP TABLE erasures; ALTER TABLE tombstones DROP COLUMN person; PRAGMA user_version = 18")
        }
        var store = try HealthStore(path: path)
        let steps = try await store.migrationSteps()
        var step = try XCTUnwrap(steps.first { $0.name == "attribution" })
        XCTAssertEqual(step.total, 7, "the readings; a workout is its participant's already")
        XCTAssertNil(step.finished)
        for _ in 0..<2 { _ = try await store.migrateBatch(attributionWindow: 3) }
        await store.close()
        store = try HealthStore(path: path)
        var batches = 2
        while step.finished == nil, batches < 20 {
            let progress = try await store.migrateBatch(attributionWindow: 3)
            step = try XCTUnwrap(progress.first { $0.name == "attribution" })
            batches += 1
        }
        XCTAssertNotNil(step.finished, "\(step)")
        XCTAssertEqual(batches, 3, "eight anchors in windows of three, the last after the reopen")
        func values(_ person: SampleFilter.PersonSelection) async throws -> [Double] {
            try await store.samples(of: StoreTestCase.plainType, filter: SampleFilter(person: person)).map(\.quantity.value).sorted()
        }
        let anas = try await values(.named("Ana"))
        XCTAssertEqual(anas, [2, 3], "her strap's after the assignment")
        let bens = try await values(.named("Ben"))
        XCTAssertEqual(bens, [5], "the workout's device while it ran")
        let cais = try await values(.named("Cai"))
        XCTAssertEqual(cais, [4], "attributed already: kept")
        let nobodys = try await values(.unattributed)
        XCTAssertEqual(nobodys, [1, 6, 7])
        await store.close()
    }

    /// `participant attribute`: an unattributed weighing, a blood-pressure reading and a closed
    /// series each become a new version with their person; the old sample and correlation leave
    /// tombstones (a new sync version replacing an old one), the series keeps its uuid at its
    /// next version; a workout or an open series is refused, changing nothing.
    func testAttributingAfterwardsMakesNewVersions() async throws {
        let ids = makeIDs()
        let scale = Device(name: "MIBFS", localIdentifier: "C8:47:8C:01:02:03")
        let cuff = Device(name: "Cuff", localIdentifier: "28:FF:B2:00:00:01")
        let weighing = try QuantitySample(
            id: ids.next(), type: .bodyMass, quantity: Quantity(70.4, .kilogram), start: at(0), end: at(0), device: scale)
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: at(30), end: at(30), device: cuff)
        }
        let pressure = try CorrelationSample.bloodPressure(
            id: ids.next(), systolic: try member(.bloodPressureSystolic, 121), diastolic: try member(.bloodPressureDiastolic, 79), device: cuff)
        let workout = Workout(id: ids.next(), activityType: .cycling, startDate: at(0), endDate: at(60), duration: 60)
        var store = try HealthStore(path: path)
        try await store.write([.quantity(weighing), .correlation(pressure), .workout(workout)] + (0..<5).map { .quantity(try heartRate(ids, 70, at: Double($0))) })
        let open = try await store.samples(of: .heartRate)
        let seriesID = try XCTUnwrap(open.first?.metadata[.series].flatMap { if case .string(let text) = $0 { SampleID(string: text) } else { nil } })
        do {
            _ = try await store.attribute(.ids([seriesID]), to: "Ana")
            XCTFail("an open series is refused")
        } catch {
            XCTAssertEqual(error.code, .inUse, "\(error)")
        }
        do {
            _ = try await store.attribute(.ids([workout.id, weighing.id]), to: "Ana")
            XCTFail("a workout is refused")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument, "\(error)")
        }
        await store.close()  // closes the series
        store = try HealthStore(path: path)
        let before = try await store.changes(since: 0).anchor
        let changed = try await store.attribute(.ids([weighing.id, pressure.id, seriesID]), to: "Ana")
        XCTAssertEqual(Set(changed.map(\.kind)), [.quantity, .correlation, .quantitySeries])
        let newWeighing = try XCTUnwrap(changed.first { $0.kind == .quantity }).after
        XCTAssertEqual(newWeighing, SampleID(syncIdentifier: weighing.id.uuidString(after: "healthgate-attribution:"), version: 1))
        XCTAssertEqual(changed.first { $0.kind == .quantitySeries }?.after, seriesID, "a series keeps its uuid")

        let anas = try await store.samples(of: .bodyMass, filter: SampleFilter(person: .named("Ana")))
        XCTAssertEqual(anas.map(\.id), [newWeighing])
        XCTAssertEqual(anas.first?.quantity, weighing.quantity)
        let nobodys = try await store.samples(of: .bodyMass, filter: SampleFilter(person: .unattributed))
        XCTAssertEqual(nobodys, [])
        let heartRates = try await store.samples(of: .heartRate, filter: SampleFilter(person: .named("Ana")))
        XCTAssertEqual(heartRates.count, 5)
        let pressures = try await store.correlations(of: .bloodPressure)
        XCTAssertEqual(pressures.map { HealthRecord.correlation($0).person }, ["Ana"])
        XCTAssertEqual(pressures.first?.objects.map { HealthRecord.quantity($0).person }, ["Ana", "Ana"])

        // What the remote sinks get: the old sample, correlation and members deleted, the new versions stored.
        let changes = try await store.changes(since: before, includingCorrelationMembers: false)
        XCTAssertEqual(Set(changes.deleted.map(\.id)), Set([weighing.id, pressure.id] + pressure.objects.map(\.id)))
        XCTAssertEqual(Set(changes.added.map(\.id)), Set(changed.map(\.after)))
        XCTAssertTrue(changes.added.allSatisfy { $0.person == "Ana" })
        await store.close()
    }

    /// A finished heartbeat series is given to a person as its next version under its uuid (the
    /// sinks replace it); one still being recorded (a provisional version) is refused.
    func testAFinishedHeartbeatSeriesIsAttributedAsItsNextVersion() async throws {
        let ids = makeIDs()
        let beats = (0..<30).map { Heartbeat(timeSinceSeriesStart: Double($0) * 0.8, precededByGap: $0 == 0) }
        let finished = try HeartbeatSeriesSample(
            id: ids.next(), start: at(0), end: at(23.2), beats: beats, device: StoreTestCase.strap)
        let recording = try HeartbeatSeriesSample(
            id: ids.next(), start: at(60), end: at(83.2), beats: beats, device: StoreTestCase.strap,
            metadata: [.provisional: .bool(true), .syncIdentifier: .string("heartbeat-series:strap:60"), .syncVersion: .integer(3)])
        let store = try HealthStore(path: path)
        try await store.write([.heartbeatSeries(finished), .heartbeatSeries(recording)])
        do {
            _ = try await store.attribute(.ids([recording.id]), to: "Ana")
            XCTFail("a series still being recorded is refused")
        } catch {
            XCTAssertEqual(error.code, .inUse, "\(error)")
        }
        let before = try await store.changes(since: 0).anchor
        let changed = try await store.attribute(.ids([finished.id]), to: "Ana")
        XCTAssertEqual(changed, [Reattribution(before: finished.id, after: finished.id, kind: .heartbeatSeries)])
        let changes = try await store.changes(since: before)
        XCTAssertEqual(changes.deleted, [], "the same uuid, replaced in place")
        guard case .heartbeatSeries(let stored)? = changes.added.first else { return XCTFail("\(changes.added)") }
        XCTAssertEqual(stored.id, finished.id)
        XCTAssertEqual(stored.beats, finished.beats)
        XCTAssertEqual(HealthRecord.heartbeatSeries(stored).person, "Ana")
        XCTAssertEqual(stored.metadata.syncVersion, 1)
        XCTAssertEqual(stored.metadata.syncIdentifier, finished.id.uuidString(after: "healthgate-attribution:"))
        let all = try await store.heartbeatSeries()
        XCTAssertEqual(all.map { HealthRecord.heartbeatSeries($0).person }, ["Ana", nil], "the one being recorded unchanged")
        await store.close()
    }
}

import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLite
import XCTest

/// A file written by each earlier schema version (1 to 8), in that version's own tables, upgrades
/// to the current one keeping every object, its anchor order, every tombstone, checkpoint,
/// workout in progress and participant, with `PRAGMA integrity_check` ok.
///
/// Each file is made by that version's migrations and rows written with raw SQL in that
/// version's shape; from version 7 on, the change log's triggers of the time give the anchors
/// and write the tombstone. Rows are written out of uuid order, so anchors in commit order and
/// anchors in uuid order (what a version-6 file gets) differ.
final class MigrationFromEveryVersionTests: StoreTestCase {
    let sensorLocation: Metadata = [MetadataKey("heartRateSensorLocation"): .string("chest")]

    /// What a file holds, to compare after the upgrade.
    struct Written {
        var samples: [QuantitySample]
        var series: HeartbeatSeriesSample
        var workout: Workout
        var correlation: CorrelationSample?
        /// Deleted from a file with a change log (version 7 on), leaving a tombstone.
        var deleted: QuantitySample?
        /// The objects in the order the file's change log gave them anchors: uuid order below
        /// version 7, commit order from it on.
        var anchorOrder: [SampleID]
        /// The change log's anchors, from version 7 on.
        var oldAnchors: [SampleID: Int64]
    }

    func testEveryEarlierVersionUpgradesKeepingEverything() async throws {
        for version in 1...8 {
            let file = directory.appendingPathComponent("version\(version).sqlite").path
            let written = try makeFile(version: version, path: file)
            let store = try HealthStore(path: file)
            try await check(store, written, version: version, file: file)
        }
    }

    private func makeFile(version: Int, path file: String) throws -> Written {
        let ids = makeIDs()
        let connection = try SQLiteConnection(path: file)
        try connection.migrate(Array(StoreSchema.migrations.prefix(version)))
        XCTAssertEqual(try connection.userVersion, version)
        try connection.run(
            "INSERT INTO devices (id, name, manufacturer, model, firmware_version, local_identifier) VALUES (1, ?1, ?2, ?3, ?4, ?5)",
            [strap.name, strap.manufacturer, strap.model, strap.firmwareVersion, strap.localIdentifier].map { .text($0 ?? "") })
        try connection.run("INSERT INTO devices (id, name, local_identifier) VALUES (3, 'pedometer', 'usb-1')")
        let synced = sensorLocation.synced("watch-1", version: 3)
        let samples = [
            try heartRate(ids, 72, at: 1, metadata: sensorLocation),
            try heartRate(ids, 1.25, at: 2, unit: try HealthUnit("count/s"), metadata: sensorLocation),
            try heartRate(ids, 80, at: 3, metadata: synced),
            try steps(ids, 120, from: 0, to: 600),
        ]
        let deleted = version >= 7 ? try heartRate(ids, 90, at: 4, metadata: sensorLocation) : nil
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: at(10), end: at(12),
            beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: false),
                    Heartbeat(timeSinceSeriesStart: 0.8125, precededByGap: true)],
            device: strap, metadata: sensorLocation)
        let workout = Workout(id: ids.next(), activityType: .cycling, startDate: at(0), endDate: at(60), duration: 60)
        var correlation: CorrelationSample?
        if version >= 6 {
            let cuff = Device(name: "Cuff", localIdentifier: "C0:FF:EE:00:00:01")
            func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
                try QuantitySample(
                    id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: at(30), end: at(30),
                    device: cuff)
            }
            correlation = try .bloodPressure(
                id: ids.next(), systolic: try member(.bloodPressureSystolic, 121), diastolic: try member(.bloodPressureDiastolic, 79),
                device: cuff)
            try connection.run(
                "INSERT INTO devices (id, name, local_identifier) VALUES (2, 'Cuff', 'C0:FF:EE:00:00:01')")
        }

        // Metadata: in sets from version 2 on, one row per entry and owner in version 1.
        var sets: [[UInt8]: Int64] = [:]
        func metadataColumn(_ metadata: Metadata, owner: SampleID) throws -> SQLiteValue {
            var entries = metadata
            entries.syncIdentifier = nil
            entries.syncVersion = nil
            guard !entries.isEmpty else { return .null }
            if version == 1 {
                try insertVersion1Metadata(entries, owner: owner, into: connection)
                return .null
            }
            let canonical = StoreSchema.canonicalEncoding(of: entries)
            if let id = sets[canonical] { return .integer(id) }
            try connection.run("INSERT INTO metadata_sets (canonical) VALUES (?1)", [.blob(canonical)])
            let id = connection.lastInsertRowID
            for (key, value) in entries.values {
                guard case .string(let text) = value else { continue }
                try connection.run(
                    "INSERT INTO metadata_entries (set_id, key, value_type, value) VALUES (?1, ?2, 'string', ?3)",
                    [.integer(id), .text(key.rawValue), .text(text)])
            }
            sets[canonical] = id
            return .integer(id)
        }
        let withSets = version >= 2
        func insertSample(_ sample: QuantitySample, device: Int64) throws {
            let metadata = try metadataColumn(sample.metadata, owner: sample.id)
            var values: [SQLiteValue] = [
                .blob(sample.id.bytes), .text(sample.type.identifier), .real(sample.canonicalValue),
                .text(sample.quantity.unit.unitString), .real(sample.quantity.value),
                .integer(StoreTime.microseconds(sample.startDate)), .integer(StoreTime.microseconds(sample.endDate)),
                .integer(device), sample.metadata.syncIdentifier.map(SQLiteValue.text) ?? .null,
                sample.metadata.syncVersion.map(SQLiteValue.integer) ?? .null,
            ]
            if withSets { values.append(metadata) }
            try connection.run(
                """
                INSERT INTO samples (uuid, type, value, unit, original_value, start_us, end_us, device_id, sync_identifier,
                    sync_version\(withSets ? ", metadata_set_id" : ""))
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10\(withSets ? ", ?11" : ""))
                """, values)
            if sample.type == .stepCount {
                // The longest sample per type (version 1 on), as that version's writer kept it.
                try connection.run(
                    "INSERT OR REPLACE INTO sample_type_spans (type, max_duration_us) VALUES ('stepCount', ?1)",
                    [.integer(StoreTime.microseconds(sample.endDate) - StoreTime.microseconds(sample.startDate))])
            }
        }

        // Written out of uuid order: the workout first, then the samples newest first.
        let seriesMetadata = try metadataColumn(series.metadata, owner: series.id)
        try connection.run(
            """
            INSERT INTO workouts (uuid, activity_type, start_us, end_us, duration\(withSets ? ", metadata_set_id" : ""))
            VALUES (?1, 'cycling', ?2, ?3, 60\(withSets ? ", NULL" : ""))
            """,
            [.blob(workout.id.bytes), .integer(StoreTime.microseconds(workout.startDate)),
             .integer(StoreTime.microseconds(workout.endDate))])
        for sample in ([deleted].compactMap { $0 } + samples).reversed() {
            try insertSample(sample, device: sample.type == .stepCount ? 3 : 1)
        }
        try connection.run(
            """
            INSERT INTO heartbeat_series (uuid, start_us, end_us, beat_count, device_id\(withSets ? ", metadata_set_id" : ""))
            VALUES (?1, ?2, ?3, 2, 1\(withSets ? ", ?4" : ""))
            """,
            [.blob(series.id.bytes), .integer(StoreTime.microseconds(series.startDate)),
             .integer(StoreTime.microseconds(series.endDate))] + (withSets ? [seriesMetadata] : []))
        for (index, beat) in series.beats.enumerated() {
            try connection.run(
                "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, ?4)",
                [.blob(series.id.bytes), .integer(Int64(index)), .real(beat.timeSinceSeriesStart),
                 .integer(beat.precededByGap ? 1 : 0)])
        }
        if let correlation {
            for member in correlation.objects { try insertSample(member, device: 2) }
            try connection.run(
                """
                INSERT INTO correlations (uuid, type, start_us, end_us, device_id) VALUES (?1, 'bloodPressure', ?2, ?3, 2)
                """,
                [.blob(correlation.id.bytes), .integer(StoreTime.microseconds(correlation.startDate)),
                 .integer(StoreTime.microseconds(correlation.endDate))])
            for (index, member) in correlation.objects.enumerated() {
                try connection.run(
                    "INSERT INTO correlation_members (correlation_uuid, member_index, sample_uuid) VALUES (?1, ?2, ?3)",
                    [.blob(correlation.id.bytes), .integer(Int64(index)), .blob(member.id.bytes)])
            }
        }
        if version >= 3 {
            try connection.run(
                "INSERT INTO source_checkpoints (namespace, key, payload) VALUES ('serial-pedometer', 'SN-1', x'7b7d')")
        }
        if version >= 4 {
            let live = SQLiteValue.blob(ids.next().bytes)
            try connection.run(
                """
                INSERT INTO live_workouts (uuid, activity_type, first_activity_uuid, devices, types)
                VALUES (?1, 'running', ?2, NULL, '["heartRate"]')
                """, [live, .blob(ids.next().bytes)])
            try connection.run(
                "INSERT INTO live_workout_events (workout_uuid, entry_index, action, at_us) VALUES (?1, 0, 'start', 0)", [live])
        }
        if version >= 5 {
            try connection.run("INSERT INTO participant_devices (device, participant, assigned_us) VALUES ('AA', 'Ana', 1)")
        }
        var oldAnchors: [SampleID: Int64] = [:]
        if let deleted {
            // Version 7 and 8's triggers write the tombstone.
            try connection.run("DELETE FROM samples WHERE uuid = ?1", [.blob(deleted.id.bytes)])
            for row in try connection.query("SELECT uuid, anchor FROM changes") {
                guard let bytes = row.blob(0), let id = SampleID(bytes: bytes), let anchor = row.integer(1) else { continue }
                oldAnchors[id] = anchor
            }
        }
        let objects = samples.map(\.id) + [series.id, workout.id] + (correlation.map { [$0.id] + $0.objects.map(\.id) } ?? [])
        let anchorOrder = version >= 7
            ? objects.sorted { (oldAnchors[$0] ?? 0) < (oldAnchors[$1] ?? 0) }
            : objects.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        return Written(
            samples: samples, series: series, workout: workout, correlation: correlation, deleted: deleted,
            anchorOrder: anchorOrder, oldAnchors: oldAnchors)
    }

    private func check(_ store: HealthStore, _ written: Written, version: Int, file: String) async throws {
        let label = "version \(version)"
        let shell = try SQLiteConnection(path: file, mode: .readOnly)
        XCTAssertEqual(try shell.userVersion, StoreSchema.version, label)
        XCTAssertEqual(try shell.query("PRAGMA integrity_check").first?.text(0), "ok", label)
        XCTAssertEqual(try shell.query("PRAGMA foreign_key_check").count, 0, label)

        // Every object, read back exactly.
        let heartRates = try await store.samples(of: .heartRate)
        XCTAssertEqual(heartRates, written.samples.filter { $0.type == .heartRate }, label)
        let stepSamples = try await store.samples(of: .stepCount)
        XCTAssertEqual(stepSamples, written.samples.filter { $0.type == .stepCount }, label)
        let steps = try await store.statistics(of: .stepCount, from: at(300), to: at(900))
        XCTAssertEqual(steps.sum ?? 0, 60, accuracy: 1e-9, "\(label): the long sample is still found by its span")
        let series = try await store.heartbeatSeries()
        XCTAssertEqual(series, [written.series], label)
        let workouts = try await store.workouts()
        XCTAssertEqual(workouts.map(\.id), [written.workout.id], label)
        if let correlation = written.correlation {
            let stored = try await store.correlations(of: .bloodPressure)
            XCTAssertEqual(stored, [correlation], label)
        }

        // Anchors in the order the file gave them, tombstones with their own.
        let changes = try await store.changes(since: 0)
        XCTAssertEqual(changes.added.map(\.id), written.anchorOrder, label)
        if version >= 7 {
            XCTAssertEqual(
                changes.addedAnchors, written.anchorOrder.map { written.oldAnchors[$0] ?? -1 }, "\(label): anchors kept")
            let deleted = try XCTUnwrap(written.deleted)
            XCTAssertEqual(
                changes.deleted, [StoreChanges.Deletion(
                    id: deleted.id, kind: .quantity, type: "heartRate", anchor: written.oldAnchors[deleted.id] ?? -1)],
                label)
        } else {
            XCTAssertEqual(changes.addedAnchors, Array(1...Int64(written.anchorOrder.count)), label)
            XCTAssertEqual(changes.deleted, [], label)
        }
        // Anchors keep growing from the greatest one the file handed out.
        let before = changes.anchor
        let next = try heartRate(SampleIDGenerator(seed: 9, milliseconds: { 1_800_057_700_000 }), 99, at: 500)
        try await store.write([.quantity(next)])
        let after = try await store.changes(since: before)
        XCTAssertEqual(after.added.map(\.id), [next.id], label)
        XCTAssertEqual(after.addedAnchors, [before + 1], label)

        if version >= 3 {
            let checkpoint = try await store.sourceCheckpoint(namespace: "serial-pedometer", key: "SN-1")
            XCTAssertEqual(checkpoint?.payload, Data("{}".utf8), label)
        }
        if version >= 4 {
            XCTAssertEqual(try store.workoutJournal().count, 1, label)
        }
        if version >= 5 {
            XCTAssertEqual(try store.storedParticipantAssignments(), [ParticipantAssignment(device: "AA", participant: "Ana")], label)
        }
    }
}

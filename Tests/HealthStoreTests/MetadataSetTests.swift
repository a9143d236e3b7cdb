import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// Metadata stored once per distinct set (schema version 2).
final class MetadataSetTests: StoreTestCase {
    /// The entries a heart-rate monitor attaches to every sample.
    func monitorMetadata(address: String = "AA:BB:CC:DD:EE:FF", battery: Int64 = 87) -> Metadata {
        var metadata = Metadata()
        metadata[MetadataKey("healthgate.bleAddress")] = .string(address)
        metadata[MetadataKey("healthgate.batteryLevel")] = .integer(battery)
        metadata.heartRateSensorLocation = .chest
        return metadata
    }

    func testEveryValueTypeRoundTripsExactly() async throws {
        let ids = makeIDs()
        var metadata = Metadata()
        // Doubles that need all 17 significant digits, the extremes, and a negative zero.
        metadata[MetadataKey("d.sum")] = .double(0.1 + 0.2)
        metadata[MetadataKey("d.third")] = .double(1.0 / 3.0)
        metadata[MetadataKey("d.tiny")] = .double(.leastNonzeroMagnitude)
        metadata[MetadataKey("d.huge")] = .double(-.greatestFiniteMagnitude)
        metadata[MetadataKey("d.negativeZero")] = .double(-0.0)
        metadata[MetadataKey("i.min")] = .integer(.min)
        metadata[MetadataKey("i.max")] = .integer(.max)
        metadata[MetadataKey("b.true")] = .bool(true)
        metadata[MetadataKey("b.false")] = .bool(false)
        metadata[MetadataKey("s.unicode")] = .string("Brustgurt ❤️ 心拍計 Ωμέγα 𝄞")
        // The same letter precomposed and decomposed: equal for Swift, different bytes.
        metadata[MetadataKey("s.nfc")] = .string("caf\u{E9}")
        metadata[MetadataKey("s.nfd")] = .string("cafe\u{301}")
        metadata[MetadataKey("s.empty")] = .string("")
        metadata[MetadataKey("clé ✓")] = .string("unicode key")
        let sample = try plainReading(ids, 72, at: 1, metadata: metadata)
        // A heart rate: a quantity series, pointing to the set as a sample does.
        let pulse = try heartRate(ids, 72, at: 1, metadata: metadata)
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: at(2), end: at(3), beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)],
            device: strap, metadata: metadata)
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: at(0), endDate: at(60), duration: 60, metadata: metadata)
        try await HealthStore(path: path).write([.quantity(sample), .quantity(pulse), .heartbeatSeries(series), .workout(workout)])
        // Four records, one set.
        XCTAssertEqual(try count("metadata_sets"), 1)
        XCTAssertEqual(try count("metadata_entries"), metadata.count)

        let store = try HealthStore(path: path, access: .readOnly)
        let storedSamples = try await store.samples(of: Self.plainType)
        let storedRates = try await store.samples(of: .heartRate)
        let storedSeries = try await store.heartbeatSeries()
        let storedWorkouts = try await store.workouts()
        XCTAssertEqual(storedSamples, [sample])
        XCTAssertEqual(storedRates, try storedQuantities([pulse]))
        XCTAssertEqual(storedSeries, [series])
        XCTAssertEqual(storedWorkouts, [workout])
        // A series' quantity carries the series' metadata and the key naming the series.
        var rateMetadata = storedRates.first?.metadata
        XCTAssertEqual(rateMetadata?[.series], .string(pulse.id.uuidString))
        rateMetadata?[.series] = nil
        // `==` cannot tell 0.0 from -0.0 nor NFC from NFD: compare bits and bytes.
        for read in [storedSamples.first?.metadata, rateMetadata, storedSeries.first?.metadata, storedWorkouts.first?.metadata] {
            let read = try XCTUnwrap(read)
            XCTAssertEqual(read.count, metadata.count)
            for (key, value) in metadata {
                switch (value, read[key]) {
                case (.double(let written), .double(let stored)?):
                    XCTAssertEqual(written.bitPattern, stored.bitPattern, "\(key)")
                case (.string(let written), .string(let stored)?):
                    XCTAssertEqual(Array(written.utf8), Array(stored.utf8), "\(key)")
                default:
                    XCTAssertEqual(read[key], value, "\(key)")
                }
            }
        }
        XCTAssertEqual(
            try sqlite3("SELECT value_type, typeof(value) FROM metadata_entries WHERE key IN ('b.true', 'd.sum', 'i.min', 's.nfc') ORDER BY key"),
            "bool|integer\ndouble|real\ninteger|integer\nstring|text")
        // Readable from the shell, per record.
        XCTAssertEqual(
            try sqlite3("SELECT record, value FROM metadata_readable WHERE key = 's.unicode' ORDER BY record"),
            "heartbeat_series|Brustgurt ❤️ 心拍計 Ωμέγα 𝄞\nquantity_series|Brustgurt ❤️ 心拍計 Ωμέγα 𝄞\n"
                + "sample|Brustgurt ❤️ 心拍計 Ωμέγα 𝄞\nworkout|Brustgurt ❤️ 心拍計 Ωμέγα 𝄞")
    }

    func testEachDistinctSetIsStoredOnce() async throws {
        let ids = makeIDs()
        let writer = try HealthStore(path: path)
        let metadata = monitorMetadata()
        for batch in 0..<10 {
            let records = try (0..<100).map { index in
                HealthRecord.quantity(try plainReading(ids, 70, at: Double(batch * 100 + index), metadata: metadata))
            }
            let awaited9 = try await writer.write(records).inserted
            XCTAssertEqual(awaited9, 100)
        }
        XCTAssertEqual(try count("samples"), 1000)
        XCTAssertEqual(try count("metadata_sets"), 1)
        XCTAssertEqual(try count("metadata_entries"), 3)
        XCTAssertEqual(try sqlite3("SELECT count(DISTINCT metadata_set_id) FROM samples"), "1")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM samples WHERE metadata_set_id IS NULL"), "0")

        // Two devices interleaved, and the first device's battery dropping: two new sets.
        let other = Device(name: "Wahoo TICKR", localIdentifier: "11:22:33:44:55:66")
        let otherMetadata = monitorMetadata(address: "11:22:33:44:55:66")
        let lowBattery = monitorMetadata(battery: 86)
        let mixed = try (0..<100).map { index in
            HealthRecord.quantity(try plainReading(
                ids, 80, at: Double(2000 + index), device: index.isMultiple(of: 2) ? strap : other,
                metadata: index.isMultiple(of: 2) ? (index < 50 ? metadata : lowBattery) : otherMetadata))
        }
        try await writer.write(mixed)
        XCTAssertEqual(try count("metadata_sets"), 3)
        XCTAssertEqual(try count("metadata_entries"), 9)

        // A new writer (empty cache, as after a restart) finds the stored sets instead of
        // duplicating them, whatever order the entries were inserted in.
        var reordered = Metadata()
        reordered.heartRateSensorLocation = .chest
        reordered[MetadataKey("healthgate.batteryLevel")] = .integer(87)
        reordered[MetadataKey("healthgate.bleAddress")] = .string("AA:BB:CC:DD:EE:FF")
        try await HealthStore(path: path).write([.quantity(try plainReading(ids, 90, at: 3000, metadata: reordered))])
        XCTAssertEqual(try count("metadata_sets"), 3)
        XCTAssertEqual(try count("metadata_entries"), 9)
        XCTAssertEqual(
            try sqlite3("SELECT count(*) FROM samples WHERE metadata_set_id = (SELECT metadata_set_id FROM samples WHERE start_us = 1800057600000000)"),
            "1026")

        // Records without metadata point nowhere, nor does a sample with only its sync keys: they
        // are in its `sample_sync` row (version 17).
        let syncOnly = Metadata().synced("only-sync", version: 1)
        try await writer.write([
            .quantity(try plainReading(ids, 91, at: 3001)), .quantity(try plainReading(ids, 92, at: 3002, metadata: syncOnly)),
        ])
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM samples WHERE metadata_set_id IS NULL"), "2")
        XCTAssertEqual(try count("metadata_sets"), 3)
        XCTAssertEqual(try sqlite3("SELECT sync_identifier, sync_version FROM sample_sync"), "only-sync|1")

        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: Self.plainType)
        XCTAssertEqual(stored.count, 1103)
        XCTAssertEqual(stored.filter { $0.metadata == syncOnly }.count, 1)
        XCTAssertEqual(stored.filter { $0.metadata == metadata }.count, 1026)
        XCTAssertEqual(stored.filter { $0.metadata == lowBattery }.count, 25)
        XCTAssertEqual(stored.filter { $0.metadata == otherMetadata }.count, 50)
        XCTAssertEqual(stored.last?.metadata, syncOnly)
    }

    /// Schema version 16: a set with the keys the gateway stamps on every record of a run and
    /// keys of its own is stored as its own entries extending the run's set, stored once. Every
    /// reader sees the whole set: the samples query, the newest sample, a filter on a run's key
    /// and on an own key, and `metadata_readable`.
    func testARecordsOwnEntriesExtendTheRunsSetStoredOnce() async throws {
        let ids = makeIDs()
        var run = Metadata()
        run[.gatewayName] = .string("gym")
        run[.gatewayVersion] = .string("0.1.0")
        run[.timeZone] = .string("Europe/Berlin")
        run[.sourceName] = .string("straps")
        run[.bootID] = .string("3da91030-4d13-4695-a73f-1c6255550eb9")
        run[.clockBase] = .integer(1_795_790_142_819)
        // HRV samples, each unique by its sync identifier and its heartbeat series.
        let samples = try (0..<200).map { index in
            var metadata = run.synced("hrv-sdnn:\(index)", version: 1)
            metadata[MetadataKey("healthgate.heartbeatSeries")] = .string("series-\(index)")
            return try plainReading(ids, 40 + Double(index % 30), at: Double(index), metadata: metadata)
        }
        let store = try HealthStore(path: path)
        try await store.write(samples.map(HealthRecord.quantity))
        XCTAssertEqual(try count("metadata_sets"), 201, "the run's set and a set of its own per sample")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM metadata_entries WHERE key = 'healthgate.gateway'"), "1")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM metadata_sets WHERE parent_id IS NOT NULL"), "200")
        // The sync keys are in `sample_sync` (version 17): the series is each sample's own entry.
        XCTAssertEqual(try count("metadata_entries"), 6 + 200)

        let stored = try await store.samples(of: Self.plainType)
        XCTAssertEqual(stored.map(\.metadata), samples.map(\.metadata))
        let newest = try await store.mostRecentSample(of: Self.plainType)
        XCTAssertEqual(newest?.metadata, samples.last?.metadata)
        let byRunKey = try await store.samples(of: Self.plainType, filter: SampleFilter(metadata: ["healthgate.gateway": "gym"]))
        XCTAssertEqual(byRunKey.count, 200)
        let byOwnKey = try await store.samples(
            of: Self.plainType, filter: SampleFilter(metadata: ["healthgate.heartbeatSeries": "series-7", "timeZone": "Europe/Berlin"]))
        XCTAssertEqual(byOwnKey.map(\.id), [samples[7].id])
        XCTAssertEqual(
            try sqlite3("SELECT count(*) FROM metadata_readable WHERE uuid = lower(hex(x'\(samples[3].id.bytes.map { String(format: "%02x", $0) }.joined())'))"),
            "9", "the six run keys, the sync keys and the series")
    }

    /// Schema version 17: a sample with both sync keys keeps them in its `sample_sync` row, not
    /// in its set, so samples that differ only by them (a series' SDNN and RMSSD) share one set;
    /// a sample with one of them keeps it in its set. A record's object keys (its heartbeat
    /// series) extend the set of its other entries, which its strap's readings share. Every reader sees the same metadata as
    /// written: the samples query, the newest sample, the change log, a filter on each sync key,
    /// `metadata_readable`; a deleted sample takes its `sample_sync` row with it.
    func testASamplesSyncKeysLiveInItsSyncRowSoASeriesSDNNAndRMSSDShareASet() async throws {
        let ids = makeIDs()
        var strapMetadata = monitorMetadata()
        strapMetadata[.gatewayName] = .string("gym")
        var shared = strapMetadata
        shared[MetadataKey("healthgate.heartbeatSeries")] = .string("series-1")
        let pair = try ["sdnn", "rmssd"].enumerated().map { index, name in
            let metadata = shared.synced("hrv-\(name):series-1", version: 1)
            return try plainReading(ids, 40 + Double(index), at: Double(index), metadata: metadata)
        }
        var onlyIdentifier = shared
        onlyIdentifier.syncIdentifier = "no-version"
        let lone = try plainReading(ids, 50, at: 5, metadata: onlyIdentifier)
        // The strap's own reading, with the strap's metadata only.
        let strap = try plainReading(ids, 60, at: 6, metadata: strapMetadata)
        let store = try HealthStore(path: path)
        try await store.write((pair + [lone, strap]).map(HealthRecord.quantity))
        // The run's set; the strap's extending it; the pair's, its heartbeat series extending the
        // strap's (three deep); the lone sample's rest (the strap's entries and its identifier,
        // extending the run's) and its series extending that.
        XCTAssertEqual(try count("metadata_sets"), 5)
        XCTAssertEqual(
            try sqlite3("SELECT count(*) FROM samples s JOIN metadata_sets m ON m.id = s.metadata_set_id WHERE m.parent_id = (SELECT metadata_set_id FROM samples WHERE start_us = \(Int64(strap.startDate.timeIntervalSince1970 * 1_000_000)))"),
            "2", "the pair's set extends the strap's")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM metadata_entries WHERE key = 'healthgate.heartbeatSeries'"), "2")
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM metadata_entries WHERE key IN ('syncIdentifier', 'syncVersion')"), "1")
        XCTAssertEqual(try count("sample_sync"), 3)

        let written = pair + [lone, strap]
        let stored = try await store.samples(of: Self.plainType)
        XCTAssertEqual(stored.map(\.metadata), written.map(\.metadata))
        let newest = try await store.mostRecentSample(of: Self.plainType)
        XCTAssertEqual(newest?.metadata, strap.metadata)
        let byStrapAndSeries = try await store.samples(
            of: Self.plainType, filter: SampleFilter(metadata: [
                "healthgate.gateway": "gym", "healthgate.bleAddress": "AA:BB:CC:DD:EE:FF", "healthgate.heartbeatSeries": "series-1",
            ]))
        XCTAssertEqual(byStrapAndSeries.map(\.id), pair.map(\.id) + [lone.id], "a filter on a key of each of the three levels")
        let changes = try await store.changes(since: 0)
        XCTAssertEqual(changes.added.compactMap { if case .quantity(let sample) = $0 { sample.metadata } else { nil } },
                       written.map(\.metadata))
        let byIdentifier = try await store.samples(of: Self.plainType, filter: SampleFilter(metadata: ["syncIdentifier": "hrv-rmssd:series-1"]))
        XCTAssertEqual(byIdentifier.map(\.id), [pair[1].id])
        let byVersion = try await store.samples(of: Self.plainType, filter: SampleFilter(metadata: ["syncVersion": "1"]))
        XCTAssertEqual(byVersion.map(\.id), pair.map(\.id))
        let byLoneIdentifier = try await store.samples(of: Self.plainType, filter: SampleFilter(metadata: ["syncIdentifier": "no-version"]))
        XCTAssertEqual(byLoneIdentifier.map(\.id), [lone.id])
        let hex = pair[0].id.bytes.map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(
            try sqlite3("SELECT group_concat(key || '=' || value, ',') FROM (SELECT key, value FROM metadata_readable WHERE uuid = '\(hex)' AND key LIKE 'sync%' ORDER BY key)"),
            "syncIdentifier=hrv-sdnn:series-1,syncVersion=1")

        try await store.delete(.ids([pair[0].id]))
        XCTAssertEqual(try count("sample_sync"), 2, "the deleted sample's sync row went with it")
    }

    func testSetsThatLookAlikeStayApart() async throws {
        let ids = makeIDs()
        let values: [MetadataValue] = [.integer(1), .double(1), .bool(true), .string("1"), .double(0), .double(-0.0)]
        let records = try values.enumerated().map { index, value in
            HealthRecord.quantity(try heartRate(ids, 60, at: Double(index), metadata: [MetadataKey("x"): value]))
        }
        try await HealthStore(path: path).write(records)
        XCTAssertEqual(try count("metadata_sets"), values.count)
        XCTAssertEqual(
            try sqlite3("SELECT value_type FROM metadata_entries ORDER BY set_id"),
            "integer\ndouble\nbool\nstring\ndouble\ndouble")
    }

    func testCanonicalEncodingIsExactAndIndependentOfInsertionOrder() {
        var forward = Metadata()
        forward[MetadataKey("b")] = .integer(-2)
        forward[MetadataKey("a")] = .string("é")
        var backward = Metadata()
        backward[MetadataKey("a")] = .string("é")
        backward[MetadataKey("b")] = .integer(-2)
        let bytes = StoreSchema.canonicalEncoding(of: forward)
        XCTAssertEqual(bytes, StoreSchema.canonicalEncoding(of: backward))
        // Format 1, two entries; "a": string "é" (2 UTF-8 bytes); "b": integer -2 (big-endian).
        XCTAssertEqual(bytes, [
            1, 0, 0, 0, 2,
            0, 0, 0, 1, 0x61, 0x73, 0, 0, 0, 2, 0xC3, 0xA9,
            0, 0, 0, 1, 0x62, 0x69, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,
        ])
        XCTAssertEqual(
            StoreSchema.canonicalEncoding(of: [MetadataKey("d"): .double(1.5)]),
            [1, 0, 0, 0, 1, 0, 0, 0, 1, 0x64, 0x64, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(
            StoreSchema.canonicalEncoding(of: [MetadataKey("f"): .bool(true)]),
            [1, 0, 0, 0, 1, 0, 0, 0, 1, 0x66, 0x62, 1])
        // Keys sort by UTF-8 bytes: "Z" (0x5A) before "a" (0x61) before "é" (0xC3 0xA9).
        let sortedKeys = StoreSchema.canonicalEncoding(of: [
            MetadataKey("é"): .bool(false), MetadataKey("a"): .bool(false), MetadataKey("Z"): .bool(false),
        ])
        // Each entry: 4 length bytes, the key, the type, the value (1 byte for a bool).
        XCTAssertEqual(sortedKeys.count, 5 + 7 + 7 + 8)
        XCTAssertEqual(sortedKeys[9], 0x5A)
        XCTAssertEqual(sortedKeys[16], 0x61)
        XCTAssertEqual(Array(sortedKeys[23...24]), [0xC3, 0xA9])
        // Equal for Swift, different for the store.
        XCTAssertNotEqual(
            StoreSchema.canonicalEncoding(of: [MetadataKey("s"): .string("caf\u{E9}")]),
            StoreSchema.canonicalEncoding(of: [MetadataKey("s"): .string("cafe\u{301}")]))
        XCTAssertNotEqual(
            StoreSchema.canonicalEncoding(of: [MetadataKey("d"): .double(0)]),
            StoreSchema.canonicalEncoding(of: [MetadataKey("d"): .double(-0.0)]))
    }

    func testSyncReplacementHasItsOwnMetadataAndSharedSetsSurvive() async throws {
        let ids = makeIDs()
        func version(_ number: Int64, note: String) -> Metadata {
            var metadata = monitorMetadata().synced("watch-7", version: number)
            metadata[MetadataKey("healthgate.note")] = .string(note)
            return metadata
        }
        let writer = try HealthStore(path: path)
        let first = try plainReading(ids, 70, at: 5, metadata: version(1, note: "first"))
        // Another sample with the first version's other entries: the same set, since a sample's
        // sync keys are in its `sample_sync` row (version 17).
        var sharing = monitorMetadata()
        sharing[MetadataKey("healthgate.note")] = .string("first")
        let neighbour = try plainReading(ids, 71, at: 6, metadata: sharing)
        try await writer.write([.quantity(first), .quantity(neighbour)])
        XCTAssertEqual(try count("metadata_sets"), 1)

        let second = try plainReading(ids, 75, at: 5, metadata: version(2, note: "second"))
        let replaced = try await writer.write([.quantity(second)]).replaced
        XCTAssertEqual(replaced, 1)
        XCTAssertEqual(try count("samples"), 2)
        XCTAssertEqual(try count("metadata_sets"), 2)
        XCTAssertEqual(try sqlite3("SELECT sync_identifier, sync_version FROM sample_sync"), "watch-7|2")

        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: Self.plainType)
        XCTAssertEqual(stored, [second, neighbour])
        XCTAssertEqual(stored.first?.metadata[MetadataKey("healthgate.note")], .string("second"))
        // The replaced version's set was shared and is still the neighbour's.
        XCTAssertEqual(stored.last?.metadata, sharing)

        // Workouts and heartbeat series follow the same rule.
        func workout(_ number: Int64, indoor: Bool) -> Workout {
            var metadata = Metadata().synced("run-9", version: number)
            metadata[MetadataKey("healthgate.indoor")] = .bool(indoor)
            return Workout(
                id: ids.next(), activityType: .running, startDate: at(0), endDate: at(60), duration: 60,
                metadata: metadata)
        }
        let laterWorkout = workout(3, indoor: true)
        try await writer.write([.workout(workout(2, indoor: false))])
        let awaited11 = try await writer.write([.workout(laterWorkout)]).replaced
        XCTAssertEqual(awaited11, 1)
        let workouts = try await HealthStore(path: path, access: .readOnly).workouts()
        XCTAssertEqual(workouts, [laterWorkout])
    }

    func testAFailedBatchForgetsTheSetsAndDevicesItInserted() async throws {
        let ids = makeIDs()
        let writer = try HealthStore(path: path)
        try await writer.write([.quantity(try plainReading(ids, 60, at: 0, metadata: monitorMetadata()))])
        // Any sample of 999 bpm now fails its insert, as a full disk or an I/O error would.
        _ = try sqlite3("""
            CREATE TRIGGER fail_on_999 BEFORE INSERT ON samples WHEN NEW.value = 999
            BEGIN SELECT RAISE(ABORT, 'test: this insert fails'); END;
            """)
        let newDevice = Device(name: "Garmin HRM-Pro", localIdentifier: "99:88:77:66:55:44")
        let newMetadata = monitorMetadata(address: "99:88:77:66:55:44", battery: 100)
        // The batch interns a new set and a new device, then fails on its second record.
        let failing: [HealthRecord] = [
            .quantity(try plainReading(ids, 61, at: 1, device: newDevice, metadata: newMetadata)),
            .quantity(try plainReading(ids, 999, at: 2)),
        ]
        do {
            try await writer.write(failing)
            XCTFail("the batch committed")
        } catch {
            XCTAssertTrue(error.message.contains("this insert fails"), error.description)
        }
        XCTAssertEqual(try count("metadata_sets"), 1)
        XCTAssertEqual(try count("devices"), 1)
        XCTAssertEqual(try count("samples"), 1)
        _ = try sqlite3("DROP TRIGGER fail_on_999")

        // The same writer writes the set and the device again: a stale cached id would point to
        // rows that were rolled back and fail the foreign key (or read back nothing).
        let retried = try plainReading(ids, 62, at: 3, device: newDevice, metadata: newMetadata)
        let awaited12 = try await writer.write([.quantity(retried)]).inserted
        XCTAssertEqual(awaited12, 1)
        XCTAssertEqual(try count("metadata_sets"), 2)
        XCTAssertEqual(try count("devices"), 2)
        XCTAssertEqual(try sqlite3("PRAGMA foreign_key_check"), "")
        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: Self.plainType, from: at(3))
        XCTAssertEqual(stored, [retried])
        XCTAssertEqual(stored.first?.device, newDevice)
        XCTAssertEqual(stored.first?.metadata, newMetadata)
    }
}

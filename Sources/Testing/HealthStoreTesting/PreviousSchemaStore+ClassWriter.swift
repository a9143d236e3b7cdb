import Foundation
import HealthModel
import HealthStore
import SQLite

extension PreviousSchemaStore {
    /// Writes a ``Class`` for ``make(path:_:)``, step by step in the order a gateway of the
    /// previous release wrote it, within the caller's transaction, and keeps what it wrote for the
    /// ``ClassContents``.
    struct ClassWriter {
        private let connection: SQLiteConnection
        private let spec: Class
        private let ids: SampleIDGenerator
        private let straps: [Device]
        private var anchor: Int64 = 0
        private var metadataSets: Int64 = 0
        /// The gateway's stamp, and the stamp with the first strap's sensor location, with their sets.
        private let stamp: Metadata = [.sourceName: .string("stick"), .gatewayVersion: .string("0.1.0")]
        private var located: Metadata
        private var stampSet: Int64 = 0
        private var locatedSet: Int64 = 0
        private var samples: [QuantitySample] = []
        private var series: [HeartbeatSeriesSample] = []
        // Each strap's, for its workout.
        private var strapSamples: [[QuantitySample]]
        private var strapSeries: [[HeartbeatSeriesSample]]
        private var anchors: [SampleID: Int64] = [:]
        /// The last anchor of each commit, in order.
        private var commits: [Int64] = []
        private var workouts: [Workout] = []
        private var linked: [SampleID: (samples: [QuantitySample], series: [HeartbeatSeriesSample])] = [:]
        private var links = 0
        private var deleted: [StoreChanges.Deletion] = []

        init(connection: SQLiteConnection, spec: Class) {
            self.connection = connection
            self.spec = spec
            ids = SampleIDGenerator(seed: 14, milliseconds: { UInt64(spec.start.timeIntervalSince1970 * 1000) })
            straps = (0..<spec.straps).map(PreviousSchemaStore.strap)
            located = stamp
            located[.heartRateSensorLocation] = .string("chest")
            strapSamples = [[QuantitySample]](repeating: [], count: straps.count)
            strapSeries = [[HeartbeatSeriesSample]](repeating: [], count: straps.count)
        }

        /// Writes the straps, the heart-rate vocabulary and the metadata sets: 1 the gateway's
        /// stamp, 2 the stamp and the first strap's sensor location (then one per workout).
        mutating func writeStraps() throws {
            let device = try connection.statement(
                "INSERT INTO devices (id, name, local_identifier, radio_identifier) VALUES (?1, ?2, ?3, ?3)")
            for (index, strap) in straps.enumerated() {
                try device.bind([.integer(Int64(index + 1)), .text(strap.name ?? ""), .text(strap.localIdentifier ?? "")])
                try device.runAndReset()
            }
            try connection.execute("""
                INSERT INTO quantity_types (id, identifier, max_duration_us) VALUES (1, 'heartRate', 0);
                INSERT INTO units (id, unit) VALUES (1, 'count/min');
                """)
            stampSet = try metadataSet(stamp)
            locatedSet = try metadataSet(located)
        }

        /// Writes each strap's heart rate a second and its heartbeat series a minute, a commit a
        /// second.
        mutating func writeReadings() throws {
            samples.reserveCapacity(spec.straps * spec.seconds)
            let sample = try connection.statement(
                """
                INSERT INTO samples (anchor, uuid, type_id, value, unit_id, start_us, duration_us, device_id, metadata_set_id)
                VALUES (?1, ?2, 1, ?3, 1, ?4, 0, ?5, ?6)
                """)
            for second in 0..<spec.seconds {
                // A transaction a second, as the gateway's sink commits a second's readings.
                for (index, strap) in straps.enumerated() {
                    let reading = try QuantitySample(
                        id: ids.next(), type: .heartRate, quantity: Quantity(Double(60 + (second * 7 + index * 13) % 90), .countPerMinute),
                        start: at(Double(second)), end: at(Double(second)), device: strap, metadata: index == 0 ? located : stamp)
                    let readingAnchor = nextAnchor()
                    try sample.bind([
                        .integer(readingAnchor), .blob(reading.id.bytes), .real(reading.quantity.value), microseconds(reading.startDate),
                        .integer(Int64(index + 1)), .integer(index == 0 ? locatedSet : stampSet),
                    ])
                    try sample.runAndReset()
                    samples.append(reading)
                    strapSamples[index].append(reading)
                    anchors[reading.id] = readingAnchor
                }
                if second % 60 == 59 || second == spec.seconds - 1 {
                    try writeSeries(minute: Double(second - second % 60))
                }
                commits.append(anchor)
            }
        }

        /// Writes each strap's heartbeat series of the minute from `minute` seconds, with its beats.
        private mutating func writeSeries(minute: Double) throws {
            let seriesRow = try connection.statement(
                "INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
            let beatRow = try connection.statement(
                "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, ?4)")
            for (index, strap) in straps.enumerated() {
                // The minute's beats, RR intervals in 1/1024 s as the straps send them.
                var ticks = 0
                let beats = (0..<spec.beatsPerSeries).map { beat in
                    ticks += 820 + (beat * 37 + index * 11) % 50
                    return Heartbeat(timeSinceSeriesStart: Double(ticks) / 1024, precededByGap: beat == 35 && index % 10 == 1)
                }
                let made = try HeartbeatSeriesSample(id: ids.next(), start: at(minute), end: at(minute + 60), beats: beats, device: strap)
                let seriesAnchor = nextAnchor()
                let uuid = SQLiteValue.blob(made.id.bytes)
                try seriesRow.bind([
                    .integer(seriesAnchor), uuid, microseconds(made.startDate), microseconds(made.endDate),
                    .integer(Int64(beats.count)), .integer(Int64(index + 1)),
                ])
                try seriesRow.runAndReset()
                for (number, beat) in beats.enumerated() {
                    try beatRow.bind([uuid, .integer(Int64(number)), .real(beat.timeSinceSeriesStart), .integer(beat.precededByGap ? 1 : 0)])
                    try beatRow.runAndReset()
                }
                series.append(made)
                strapSeries[index].append(made)
                anchors[made.id] = seriesAnchor
            }
        }

        /// The class ends: a workout per participant, in one commit, linked to what it collected.
        mutating func writeWorkouts() throws {
            let link = try connection.statement("INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2)")
            for (index, strap) in straps.enumerated() {
                let workout = try writeWorkout(of: strap, samples: strapSamples[index])
                let uuid = SQLiteValue.blob(workout.id.bytes)
                let ownSeries = strapSeries[index]
                for id in strapSamples[index].map(\.id) + ownSeries.map(\.id) {
                    try link.bind([uuid, .blob(id.bytes)])
                    try link.runAndReset()
                    links += 1
                }
                workouts.append(workout)
                linked[workout.id] = (strapSamples[index], ownSeries)
            }
            commits.append(anchor)
        }

        /// Writes the workout of the participant wearing `strap` over the class, with its
        /// heart-rate statistics of `own` and its own metadata set.
        private mutating func writeWorkout(of strap: Device, samples own: [QuantitySample]) throws -> Workout {
            let end = at(Double(spec.seconds))
            let values = own.map(\.quantity.value)
            let statistics = QuantityStatistics(
                type: .heartRate, startDate: spec.start, endDate: end, sampleCount: own.count,
                average: values.reduce(0, +) / Double(max(1, values.count)), minimum: values.min(), maximum: values.max(),
                mostRecent: own.last?.quantity.value, mostRecentDate: own.last?.startDate)
            var metadata = stamp
            metadata[.workoutDevices] = .string(strap.localIdentifier ?? "")
            let workout = Workout(
                id: ids.next(), activityType: .highIntensityIntervalTraining, startDate: spec.start, endDate: end,
                duration: Double(spec.seconds), statistics: [statistics], metadata: metadata)
            let workoutAnchor = nextAnchor()
            let uuid = SQLiteValue.blob(workout.id.bytes)
            try connection.run(
                """
                INSERT INTO workouts (anchor, uuid, activity_type, start_us, end_us, duration, metadata_set_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                """,
                [.integer(workoutAnchor), uuid, .text(workout.activityType.rawValue), microseconds(workout.startDate),
                 microseconds(workout.endDate), .real(workout.duration), .integer(try metadataSet(metadata))])
            try connection.run(
                """
                INSERT INTO workout_statistics (owner_uuid, workout_uuid, type, start_us, end_us, sample_count, average,
                    minimum, maximum, most_recent, most_recent_us)
                VALUES (?1, ?1, 'heartRate', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """,
                [uuid, microseconds(statistics.startDate), microseconds(statistics.endDate), .integer(Int64(statistics.sampleCount)),
                 statistics.average.map(SQLiteValue.real) ?? .null, statistics.minimum.map(SQLiteValue.real) ?? .null,
                 statistics.maximum.map(SQLiteValue.real) ?? .null, statistics.mostRecent.map(SQLiteValue.real) ?? .null,
                 statistics.mostRecentDate.map { microseconds($0) } ?? .null])
            anchors[workout.id] = workoutAnchor
            return workout
        }

        /// Samples deleted after the class, each leaving a tombstone and a commit; the links stay.
        mutating func deleteSamples() throws {
            let end = at(Double(spec.seconds))
            for victim in spec.deletedSamples.map({ samples[$0] }) {
                try connection.run("DELETE FROM samples WHERE anchor = ?1", [.integer(anchors[victim.id] ?? 0)])
                let tombstone = nextAnchor()
                try connection.run(
                    "INSERT INTO tombstones (anchor, uuid, kind, type, deleted_us, device) VALUES (?1, ?2, 'quantity', 'heartRate', ?3, ?4)",
                    [.integer(tombstone), .blob(victim.id.bytes), microseconds(end), .text(victim.device?.localIdentifier ?? "")])
                anchors[victim.id] = nil
                deleted.append(StoreChanges.Deletion(
                    id: victim.id, kind: .quantity, type: "heartRate", anchor: tombstone, device: victim.device?.localIdentifier))
                commits.append(anchor)
            }
            let gone = Set(deleted.map(\.id))
            samples.removeAll { gone.contains($0.id) }
            for workout in workouts {
                linked[workout.id]?.samples.removeAll { gone.contains($0.id) }
            }
        }

        /// Writes the follower, halfway: it began a batch after its cursor and the next one, and
        /// stopped with the second acknowledged and the first not; then the commits it has not
        /// passed and the latest anchor. Returns what the class holds.
        mutating func writeFollower() throws -> ClassContents {
            let end = at(Double(spec.seconds))
            let cursor = anchor / 2
            let span = Int64(spec.begunBatch)
            let batches = [
                BegunBatch(after: cursor, through: cursor + span, key: "hg2-" + String(repeating: "1", count: 32), acknowledged: false),
                BegunBatch(after: cursor + span, through: cursor + 2 * span, key: "hg2-" + String(repeating: "2", count: 32), acknowledged: true),
            ]
            try connection.run(
                "INSERT INTO followers (name, anchor, skipped, updated_us) VALUES (?1, ?2, 0, ?3)",
                [.text(spec.follower), .integer(cursor), microseconds(end)])
            for batch in batches {
                try connection.run(
                    "INSERT INTO follower_batches (follower, after, through, batch_key, acknowledged) VALUES (?1, ?2, ?3, ?4, ?5)",
                    [.text(spec.follower), .integer(batch.after), .integer(batch.through), .text(batch.key ?? ""),
                     .integer(batch.acknowledged ? 1 : 0)])
            }
            try writeCommits(after: cursor)
            try connection.run("UPDATE anchors SET latest = ?1", [.integer(anchor)])
            return ClassContents(
                straps: straps, samples: samples, heartbeatSeries: series, workouts: workouts, linked: linked, links: links,
                deleted: deleted, anchors: anchors, latest: anchor, follower: spec.follower, cursor: cursor, batches: batches)
        }

        /// The commits the follower has not passed (those it passed were deleted), a few bytes
        /// an anchor as the writer estimates them.
        private func writeCommits(after cursor: Int64) throws {
            var previous: Int64 = 0
            let commit = try connection.statement("INSERT INTO log_commits (last_anchor, committed_us, bytes) VALUES (?1, ?2, ?3)")
            for (second, last) in commits.enumerated() {
                defer { previous = last }
                guard last > cursor else { continue }
                try commit.bind([.integer(last), microseconds(at(Double(min(second, spec.seconds)))), .integer((last - previous) * 80)])
                try commit.runAndReset()
            }
        }

        /// Writes a metadata set and its string entries; returns its id.
        private mutating func metadataSet(_ metadata: Metadata) throws -> Int64 {
            metadataSets += 1
            try connection.run(
                "INSERT INTO metadata_sets (id, canonical) VALUES (?1, ?2)",
                [.integer(metadataSets), .blob(StoreSchema.canonicalEncoding(of: metadata))])
            for (key, value) in metadata.values {
                guard case .string(let text) = value else { continue }
                try connection.run(
                    "INSERT INTO metadata_entries (set_id, key, value_type, value) VALUES (?1, ?2, 'string', ?3)",
                    [.integer(metadataSets), .text(key.rawValue), .text(text)])
            }
            return metadataSets
        }

        /// The next anchor, counting from 1.
        private mutating func nextAnchor() -> Int64 {
            anchor += 1
            return anchor
        }

        private func microseconds(_ date: Date) -> SQLiteValue { .integer(StoreTime.microseconds(date)) }

        private func at(_ seconds: Double) -> Date { spec.start.addingTimeInterval(seconds) }
    }
}

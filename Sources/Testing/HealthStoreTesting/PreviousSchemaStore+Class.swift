public import Foundation
public import HealthModel
public import HealthStore
import SQLite

extension PreviousSchemaStore {
    /// A class as a gateway of the previous release stored it: each strap's heart rate a plain
    /// sample a second, a heartbeat series a minute per strap with its beats in `heartbeats`, a
    /// workout per strap over the whole class linked to its samples and series in
    /// `workout_samples`, and a follower halfway through the log with two batches begun.
    public struct Class: Sendable {
        /// How many straps, each worn by one participant for the whole class.
        public var straps: Int
        /// How long the class lasts: a heart rate per strap and second.
        public var seconds: Int
        /// Beats in each strap's series of a minute.
        public var beatsPerSeries = 70
        /// Indices into the samples in the order written (second by second, strap by strap) of
        /// those deleted after the class, each leaving a tombstone; the workouts keep their links.
        public var deletedSamples: [Int] = []
        /// The follower's name (a remote sink's instance name).
        public var follower = "repository"
        /// The anchors each of the follower's two begun batches spans.
        public var begunBatch = 100
        /// When the class starts.
        public var start: Date

        public init(straps: Int, seconds: Int, deletedSamples: [Int] = [], begunBatch: Int = 100, start: Date) {
            self.straps = straps
            self.seconds = seconds
            self.deletedSamples = deletedSamples
            self.begunBatch = begunBatch
            self.start = start
        }
    }

    /// What a made class holds, as the previous release's readers returned it.
    public struct ClassContents: Sendable {
        /// The straps, in order: `ANT+ heart-rate strap N`, known by `ant:120:N` as a class's
        /// participant lists name them.
        public var straps: [Device]
        /// Every heart rate kept, in the order written.
        public var samples: [QuantitySample]
        public var heartbeatSeries: [HeartbeatSeriesSample]
        /// A workout per strap, in the order of the straps.
        public var workouts: [Workout]
        /// Each workout's linked samples (those deleted since left out) and series.
        public var linked: [SampleID: (samples: [QuantitySample], series: [HeartbeatSeriesSample])]
        /// Rows of `workout_samples`.
        public var links: Int
        public var deleted: [StoreChanges.Deletion]
        /// Every kept object's anchor.
        public var anchors: [SampleID: Int64]
        /// The store's latest anchor.
        public var latest: Int64
        /// The follower's name and cursor.
        public var follower: String
        public var cursor: Int64
        /// The follower's begun batches: the first unacknowledged, the second acknowledged (the
        /// follower stopped with it answered and the first not), so a resumed follower sends the
        /// first again and skips the second.
        public var batches: [BegunBatch]

        /// The objects a resumed follower sends: those after its cursor, but those of the
        /// acknowledged batch.
        public var unsent: Set<SampleID> {
            let skipped = batches.filter(\.acknowledged)
            let records = anchors.filter { id, anchor in
                anchor > cursor && !skipped.contains { anchor > $0.after && anchor <= $0.through }
            }
            let deletions = deleted.filter { deletion in
                deletion.anchor > cursor && !skipped.contains { deletion.anchor > $0.after && deletion.anchor <= $0.through }
            }
            return Set(records.keys).union(deletions.map(\.id))
        }
    }

    /// The strap `index` of a made class.
    public static func strap(_ index: Int) -> Device {
        Device(name: "ANT+ heart-rate strap \(index + 1)", localIdentifier: "ant:120:\(index + 1)", radioIdentifier: "ant:120:\(index + 1)")
    }

    /// Writes the class at `path` (it must not exist) with version 14's own migrations, in one
    /// transaction, rows in that version's shape: samples as version 14's writer stored a
    /// gateway's readings (its source stamp in their metadata set, the first strap's with its
    /// sensor location too), series and their beats as rows, workouts with their statistics,
    /// their participant's strap in `healthgate.devices` and a link to each sample and series,
    /// a tombstone per deletion, the follower's cursor and begun batches, and a commit record per
    /// second the follower has not passed.
    public static func make(path: String, _ spec: Class) throws -> ClassContents {
        let connection = try SQLiteConnection(path: path)
        try connection.migrate(Array(StoreSchema.migrations.prefix(version)))
        let ids = SampleIDGenerator(seed: 14, milliseconds: { UInt64(spec.start.timeIntervalSince1970 * 1000) })
        let straps = (0..<spec.straps).map(strap)
        var anchor: Int64 = 0
        func next() -> Int64 {
            anchor += 1
            return anchor
        }
        func microseconds(_ date: Date) -> SQLiteValue { .integer(StoreTime.microseconds(date)) }
        func at(_ seconds: Double) -> Date { spec.start.addingTimeInterval(seconds) }

        try connection.execute("BEGIN")
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
        // Metadata sets: 1 the gateway's stamp, 2 the stamp and the first strap's sensor location,
        // then one per workout.
        var sets: Int64 = 0
        func metadataSet(_ metadata: Metadata) throws -> Int64 {
            sets += 1
            try connection.run(
                "INSERT INTO metadata_sets (id, canonical) VALUES (?1, ?2)", [.integer(sets), .blob(StoreSchema.canonicalEncoding(of: metadata))])
            for (key, value) in metadata.values {
                guard case .string(let text) = value else { continue }
                try connection.run(
                    "INSERT INTO metadata_entries (set_id, key, value_type, value) VALUES (?1, ?2, 'string', ?3)",
                    [.integer(sets), .text(key.rawValue), .text(text)])
            }
            return sets
        }
        let stamp: Metadata = [.sourceName: .string("stick"), .gatewayVersion: .string("0.1.0")]
        var located = stamp
        located[.heartRateSensorLocation] = .string("chest")
        let stampSet = try metadataSet(stamp)
        let locatedSet = try metadataSet(located)

        var samples: [QuantitySample] = []
        var series: [HeartbeatSeriesSample] = []
        // Each strap's, for its workout.
        var strapSamples = [[QuantitySample]](repeating: [], count: straps.count)
        var strapSeries = [[HeartbeatSeriesSample]](repeating: [], count: straps.count)
        var anchors: [SampleID: Int64] = [:]
        var commits: [Int64] = []
        samples.reserveCapacity(spec.straps * spec.seconds)
        let sample = try connection.statement(
            """
            INSERT INTO samples (anchor, uuid, type_id, value, unit_id, start_us, duration_us, device_id, metadata_set_id)
            VALUES (?1, ?2, 1, ?3, 1, ?4, 0, ?5, ?6)
            """)
        let seriesRow = try connection.statement(
            "INSERT INTO heartbeat_series (anchor, uuid, start_us, end_us, beat_count, device_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        let beatRow = try connection.statement(
            "INSERT INTO heartbeats (series_uuid, beat_index, time_since_start, preceded_by_gap) VALUES (?1, ?2, ?3, ?4)")
        for second in 0..<spec.seconds {
            // A transaction a second, as the gateway's sink commits a second's readings.
            for (index, strap) in straps.enumerated() {
                let metadata = index == 0 ? located : stamp
                let reading = try QuantitySample(
                    id: ids.next(), type: .heartRate, quantity: Quantity(Double(60 + (second * 7 + index * 13) % 90), .countPerMinute),
                    start: at(Double(second)), end: at(Double(second)), device: strap, metadata: metadata)
                let readingAnchor = next()
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
                let minute = Double(second - second % 60)
                for (index, strap) in straps.enumerated() {
                    // The minute's beats, RR intervals in 1/1024 s as the straps send them.
                    var ticks = 0
                    let beats = (0..<spec.beatsPerSeries).map { beat in
                        ticks += 820 + (beat * 37 + index * 11) % 50
                        return Heartbeat(timeSinceSeriesStart: Double(ticks) / 1024, precededByGap: beat == 35 && index % 10 == 1)
                    }
                    let made = try HeartbeatSeriesSample(id: ids.next(), start: at(minute), end: at(minute + 60), beats: beats, device: strap)
                    let seriesAnchor = next()
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
            commits.append(anchor)
        }

        // The class ends: a workout per participant, in one transaction, linked to what it
        // collected.
        var workouts: [Workout] = []
        var linked: [SampleID: (samples: [QuantitySample], series: [HeartbeatSeriesSample])] = [:]
        var links = 0
        let link = try connection.statement("INSERT INTO workout_samples (workout_uuid, sample_uuid) VALUES (?1, ?2)")
        let end = at(Double(spec.seconds))
        for (index, strap) in straps.enumerated() {
            let own = strapSamples[index]
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
            let workoutAnchor = next()
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
                 statistics.mostRecentDate.map(microseconds) ?? .null])
            let ownSeries = strapSeries[index]
            for id in own.map(\.id) + ownSeries.map(\.id) {
                try link.bind([uuid, .blob(id.bytes)])
                try link.runAndReset()
                links += 1
            }
            workouts.append(workout)
            linked[workout.id] = (own, ownSeries)
            anchors[workout.id] = workoutAnchor
        }
        commits.append(anchor)

        // Samples deleted after the class, each leaving a tombstone; the links stay.
        var deleted: [StoreChanges.Deletion] = []
        for victim in spec.deletedSamples.map({ samples[$0] }) {
            try connection.run("DELETE FROM samples WHERE anchor = ?1", [.integer(anchors[victim.id] ?? 0)])
            let tombstone = next()
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

        // The follower, halfway: it began a batch after its cursor and the next one, and stopped
        // with the second acknowledged and the first not.
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
        // The commits the follower has not passed (those it passed were deleted), a few bytes an
        // anchor as the writer estimates them.
        var previous: Int64 = 0
        let commit = try connection.statement("INSERT INTO log_commits (last_anchor, committed_us, bytes) VALUES (?1, ?2, ?3)")
        for (second, last) in commits.enumerated() {
            defer { previous = last }
            guard last > cursor else { continue }
            try commit.bind([.integer(last), microseconds(at(Double(min(second, spec.seconds)))), .integer((last - previous) * 80)])
            try commit.runAndReset()
        }
        try connection.run("UPDATE anchors SET latest = ?1", [.integer(anchor)])
        try connection.execute("COMMIT")
        return ClassContents(
            straps: straps, samples: samples, heartbeatSeries: series, workouts: workouts, linked: linked, links: links,
            deleted: deleted, anchors: anchors, latest: anchor, follower: spec.follower, cursor: cursor, batches: batches)
    }
}

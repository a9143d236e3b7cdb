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
        var writer = ClassWriter(connection: connection, spec: spec)
        try connection.execute("BEGIN")
        try writer.writeStraps()
        try writer.writeReadings()
        try writer.writeWorkouts()
        try writer.deleteSamples()
        let contents = try writer.writeFollower()
        try connection.execute("COMMIT")
        return contents
    }
}

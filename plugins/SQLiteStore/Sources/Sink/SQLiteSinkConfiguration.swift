public import Foundation
public import SampleBus

extension SQLiteSink {
    /// The `config` object of a `sqlite` sink, as written in the file (documented key by key in
    /// plugins/SQLiteStore/README.md and sample-config.json). nil takes the default.
    public struct Configuration: PluginConfigurationContract, RenamedConfigurationKeys {
        /// The database file. Default: `<data directory>/samples.sqlite`.
        public var path: String?
        /// The most records per transaction. Default 500.
        public var batchSize: Int?
        /// How long a short batch waits for more records, in seconds. Default 0.1.
        public var batchWindowSeconds: Double?
        /// A size limit for the database file (SQLite's `max_page_count`). Default: none.
        public var maxDatabaseMegabytes: Int?
        /// How long tombstones of deleted objects stay in the change log, in days. Default 90.
        public var tombstoneRetentionDays: Int?

        /// A configuration; nil keys take their defaults.
        public init(
            path: String? = nil, batchSize: Int? = nil, batchWindowSeconds: Double? = nil,
            maxDatabaseMegabytes: Int? = nil, tombstoneRetentionDays: Int? = nil
        ) {
            self.path = path
            self.batchSize = batchSize
            self.batchWindowSeconds = batchWindowSeconds
            self.maxDatabaseMegabytes = maxDatabaseMegabytes
            self.tombstoneRetentionDays = tombstoneRetentionDays
        }

        /// Old key names, suggested when they are used.
        public static let renamedKeys = ["batchWindowMilliseconds": "batchWindowSeconds"]

        /// The defaults, declared once.
        public static let defaultBatchSize = 500
        /// 100 ms: a record waits at most this long for company (Benchmarks/RESULTS.md).
        public static let defaultBatchWindowSeconds = 0.1
        /// The allowed `batchSize`.
        public static let batchSizeRange = 1...100_000
        /// The allowed `batchWindowSeconds`.
        public static let batchWindowRange: ClosedRange<Double> = 0...60
        /// The allowed `maxDatabaseMegabytes`: SQLite's largest `max_page_count` (4294967294)
        /// in 4096-byte pages (https://sqlite.org/limits.html) is just under 16 TiB.
        public static let maxDatabaseMegabytesRange = 1...16_777_215
        /// 90 days: a sync client that is offline for up to a season still gets every deletion
        /// (one row of about 40 bytes per deleted object).
        public static let defaultTombstoneRetentionDays = 90
        /// The allowed `tombstoneRetentionDays`: at least a day, at most 100 years.
        public static let tombstoneRetentionDaysRange = 1...36_500

        /// Checks every key and applies the defaults; no I/O.
        /// - Throws: ``PluginConfigurationError`` naming the key.
        public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Settings {
            let path = path ?? environment.paths.dataDirectory.appendingPathComponent("samples.sqlite").path
            guard !path.isEmpty else { throw PluginConfigurationError(keyPath: "path", reason: "must not be empty") }
            let batchSize = batchSize ?? Self.defaultBatchSize
            try PluginConfigurationError.check("batchSize", batchSize, in: Self.batchSizeRange, unit: "records")
            let window = batchWindowSeconds ?? Self.defaultBatchWindowSeconds
            try PluginConfigurationError.check("batchWindowSeconds", window, in: Self.batchWindowRange, unit: "seconds")
            if let maxDatabaseMegabytes {
                try PluginConfigurationError.check(
                    "maxDatabaseMegabytes", maxDatabaseMegabytes, in: Self.maxDatabaseMegabytesRange, unit: "MB")
            }
            let retentionDays = tombstoneRetentionDays ?? Self.defaultTombstoneRetentionDays
            try PluginConfigurationError.check(
                "tombstoneRetentionDays", retentionDays, in: Self.tombstoneRetentionDaysRange, unit: "days")
            return Settings(
                path: path, batchSize: batchSize, batchWindow: .milliseconds(Int64((window * 1000).rounded())),
                // SQLite's default page size is 4096 bytes (https://sqlite.org/pgszchng2016.html).
                maximumPageCount: maxDatabaseMegabytes.map { $0 * 256 },
                tombstoneRetention: .seconds(Int64(retentionDays) * 86_400))
        }
    }

    /// A `sqlite` sink's validated settings.
    public struct Settings: Sendable, Hashable {
        /// The database file.
        public var path: String
        /// The most records per transaction.
        public var batchSize: Int
        /// How long a short batch waits for more records.
        public var batchWindow: Duration
        /// The size limit in 4096-byte pages, or nil.
        public var maximumPageCount: Int?
        /// How long tombstones of deleted objects stay in the change log.
        public var tombstoneRetention: Duration = .seconds(Int64(Configuration.defaultTombstoneRetentionDays) * 86_400)
    }
}

public import GatewayRuntime
public import SampleBus

extension SQLiteSink {
    /// The `config` object of a `sqlite` sink, as written in the file (documented key by key in
    /// plugins/SQLiteStore/README.md and sample-config.json). nil takes the default. Where the
    /// store lives and how big it may grow is the gateway's `store` object, not the sink's.
    public struct Configuration: PluginConfigurationContract, RenamedConfigurationKeys {
        /// The most records per transaction. Default 500.
        public var batchSize: Int?
        /// How long a short batch waits for more records, in seconds. Default 0.1.
        public var batchWindowSeconds: Double?

        /// A configuration; nil keys take their defaults.
        public init(batchSize: Int? = nil, batchWindowSeconds: Double? = nil) {
            self.batchSize = batchSize
            self.batchWindowSeconds = batchWindowSeconds
        }

        /// Old key names, suggested when they are used; the store's own keys moved to the
        /// gateway's `store` object.
        public static let renamedKeys = [
            "batchWindowMilliseconds": "batchWindowSeconds",
            "path": "store.path (the top-level \"store\" object)",
            "maxDatabaseMegabytes": "store.maxDatabaseMegabytes (the top-level \"store\" object)",
            "tombstoneRetentionDays": "store.tombstoneRetentionDays (the top-level \"store\" object)",
        ]

        /// The defaults, declared once.
        public static let defaultBatchSize = 500
        /// 100 ms: a record waits at most this long for company.
        public static let defaultBatchWindowSeconds = 0.1
        /// The allowed `batchSize`.
        public static let batchSizeRange = 1...100_000
        /// The allowed `batchWindowSeconds`.
        public static let batchWindowRange: ClosedRange<Double> = 0...60

        /// Every key of the `config` object.
        public static var configurationSchema: ConfigurationSchema {
            .object([
                ConfigurationProperty(
                    "batchSize", .whole(batchSizeRange, unit: "records"), default: .number(Double(defaultBatchSize)),
                    "The most records per transaction"),
                ConfigurationProperty(
                    "batchWindowSeconds", .number(batchWindowRange, unit: "seconds"), default: .number(defaultBatchWindowSeconds),
                    "How long a short batch waits for more records before it commits"),
            ])
        }

        /// Checks every key and applies the defaults; no I/O.
        /// - Throws: ``PluginConfigurationError`` naming the key.
        public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Settings {
            let batchSize = batchSize ?? Self.defaultBatchSize
            try PluginConfigurationError.check("batchSize", batchSize, in: Self.batchSizeRange, unit: "records")
            let window = batchWindowSeconds ?? Self.defaultBatchWindowSeconds
            try PluginConfigurationError.check("batchWindowSeconds", window, in: Self.batchWindowRange, unit: "seconds")
            return Settings(batchSize: batchSize, batchWindow: .microseconds(Int64((window * 1_000_000).rounded())))
        }
    }

    /// A `sqlite` sink's validated settings.
    public struct Settings: Sendable, Hashable {
        /// The most records per transaction.
        public var batchSize: Int
        /// How long a short batch waits for more records.
        public var batchWindow: Duration

        /// Settings with these values.
        public init(batchSize: Int, batchWindow: Duration) {
            self.batchSize = batchSize
            self.batchWindow = batchWindow
        }
    }
}

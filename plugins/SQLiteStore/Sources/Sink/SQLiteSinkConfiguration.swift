public import GatewayRuntime
public import SampleBus

extension SQLiteSink {
    /// The `config` object of a `sqlite` sink, as written in the file (documented key by key in
    /// plugins/SQLiteStore/README.md and sample-config.json). Each key is declared once, in
    /// ``configurationKeys``, with its default the value `init()` gives it. Where the store lives
    /// and how big it may grow is the gateway's `store` object, not the sink's.
    public struct Configuration: PluginConfigurationContract, DeclaredConfiguration, RenamedConfigurationKeys {
        /// The most records per transaction.
        public var batchSize = 500
        /// How long a short batch waits for more records, in seconds: a record waits at most this
        /// long for company. Two seconds: each commit rewrites the growing quantity series' rows
        /// and their index entries whatever it holds, so fewer commits write fewer bytes to the
        /// card (Benchmarks/RESULTS.md, `class-store`), and a power cut may lose the readings of
        /// the last two seconds, which no one was told about.
        public var batchWindowSeconds = 2.0

        /// Every key at its default.
        public init() {}

        /// Old key names, suggested when they are used; the store's own keys moved to the
        /// gateway's `store` object.
        public static let renamedKeys = [
            "batchWindowMilliseconds": "batchWindowSeconds",
            "path": "store.path (the top-level \"store\" object)",
            "maxDatabaseMegabytes": "store.maxDatabaseMegabytes (the top-level \"store\" object)",
            "tombstoneRetentionDays": "store.tombstoneRetentionDays (the top-level \"store\" object)",
        ]

        /// The allowed `batchSize`.
        public static let batchSizeRange = 1...100_000
        /// The allowed `batchWindowSeconds`.
        public static let batchWindowRange: ClosedRange<Double> = 0...60

        /// Every key of the `config` object.
        public static var configurationKeys: [ConfigurationKey<Self>] {
            [
                ConfigurationKey("batchSize", \.batchSize, .whole(batchSizeRange, unit: "records"), "The most records per transaction"),
                ConfigurationKey(
                    "batchWindowSeconds", \.batchWindowSeconds, .number(batchWindowRange, unit: "seconds"),
                    "How long a short batch waits for more records before it commits"),
            ]
        }

        /// Checks every key; no I/O.
        /// - Throws: ``PluginConfigurationError`` naming the key.
        public func validated(in environment: PluginEnvironment) throws(PluginConfigurationError) -> Settings {
            try PluginConfigurationError.check("batchSize", batchSize, in: Self.batchSizeRange, unit: "records")
            try PluginConfigurationError.check("batchWindowSeconds", batchWindowSeconds, in: Self.batchWindowRange, unit: "seconds")
            return Settings(batchSize: batchSize, batchWindow: .microseconds(Int64((batchWindowSeconds * 1_000_000).rounded())))
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

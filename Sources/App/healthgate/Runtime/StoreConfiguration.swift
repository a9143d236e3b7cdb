import FoundationEssentials
import HealthStore
import LinuxSystem
import GatewayRuntime
import SampleBus

/// The configuration's `store` object: where the gateway's store lives and how it is kept.
///
/// ```json
/// "store": {"path": "/var/lib/healthgate/samples.sqlite", "maxDatabaseMegabytes": 4096, "tombstoneRetentionDays": 90, "retentionDays": 365,
///           "keepWorkoutSamples": false}
/// ```
/// Every key is optional; the store exists with or without the object (it is the gateway's
/// commit point). Decoded strictly (unknown keys refused with a suggestion), then checked.
struct StoreConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// The database file. Default: `<data directory>/samples.sqlite`.
    var path: String?
    /// A size limit for the database file (SQLite's `max_page_count`). Default: none.
    var maxDatabaseMegabytes: Int?
    /// How long tombstones of deleted objects stay in the change log, in days. 90 days: a sync
    /// client that is offline for up to a season still gets every deletion.
    var tombstoneRetentionDays = 90
    /// How long raw samples, quantity series and heartbeat series are kept, in days, those of
    /// finished workouts too (a workout keeps its statistics, zones, laps and curves). Default:
    /// forever.
    var retentionDays: Int?
    /// Whether `retentionDays` spares what lies in a stored workout's time. Default: false.
    var keepWorkoutSamples = false

    init() {}

    /// The allowed `maxDatabaseMegabytes`: SQLite's largest `max_page_count` (4294967294) in
    /// 4096-byte pages (https://sqlite.org/limits.html) is just under 16 TiB.
    static let maxDatabaseMegabytesRange = 1...16_777_215
    /// The allowed `tombstoneRetentionDays`: at least a day, at most 100 years.
    static let tombstoneRetentionDaysRange = 1...36_500
    /// The allowed `retentionDays`: at least a day, at most 100 years.
    static let retentionDaysRange = 1...36_500

    /// Every key of the `store` object.
    static var configurationKeys: [ConfigurationKey<Self>] {
        [
            ConfigurationKey("path", \.path, .nonEmptyText, "The store's file; absent: <data directory>/samples.sqlite"),
            ConfigurationKey(
                "maxDatabaseMegabytes", \.maxDatabaseMegabytes, .whole(maxDatabaseMegabytesRange, unit: "MB"),
                "A size limit for the file; reaching it behaves like a full disk. Absent: none"),
            ConfigurationKey(
                "tombstoneRetentionDays", \.tombstoneRetentionDays, .whole(tombstoneRetentionDaysRange, unit: "days"),
                "How long the change log keeps deletions, and never before every remote sink has them"),
            ConfigurationKey(
                "retentionDays", \.retentionDays, .whole(retentionDaysRange, unit: "days"),
                "How long raw samples, quantity series and heartbeat series are kept, a finished workout's too: it keeps "
                    + "its statistics, zones, laps and \(Int(WorkoutCurve.step.seconds))-second curves. Absent: forever"),
            ConfigurationKey(
                "keepWorkoutSamples", \.keepWorkoutSamples, .boolean,
                "Keep the raw samples and series within a stored workout's time whatever retentionDays says"),
        ]
    }

    /// The store's settings, every default applied.
    struct Settings: Sendable, Hashable {
        /// The database file.
        var path: String
        /// The size limit in 4096-byte pages, or nil.
        var maximumPageCount: Int?
        /// How long tombstones of deleted objects stay in the change log.
        var tombstoneRetention: Duration
        /// How long raw samples and series are kept, or nil: forever.
        var sampleRetention: Duration?
        /// Whether retention spares what lies in a stored workout's time.
        var keepWorkoutSamples: Bool
    }

    /// The settings of `configuration`'s `store` object (absent: every default).
    /// - Throws: ``ConfigurationError`` naming `store.KEY`.
    static func settings(of configuration: GatewayConfiguration, paths: GatewayPaths) throws(ConfigurationError) -> Settings {
        let origin = configuration.origin
        var decoded = StoreConfiguration()
        if let value = configuration.store, value != .null {
            decoded = try GatewayConfiguration.decodeSection(value, as: StoreConfiguration.self, key: "store", origin: origin)
        }
        do {
            return try decoded.validated(paths: paths)
        } catch {
            throw ConfigurationError(file: origin, keyPath: ConfigurationKeyPath.joining("store", error.keyPath), reason: error.reason)
        }
    }

    /// Checks every key and applies the defaults; no I/O.
    func validated(paths: GatewayPaths) throws(PluginConfigurationError) -> Settings {
        let path = path ?? FileSystem.join(paths.dataPath, "samples.sqlite")
        guard !path.isEmpty else { throw PluginConfigurationError(keyPath: "path", reason: "must not be empty") }
        // The declared ranges, as a file is checked against them before it is decoded.
        try Self.configurationSchema.check(configurationJSON)
        // SQLite's default page size is 4096 bytes (https://sqlite.org/pgszchng2016.html).
        return Settings(
            path: path, maximumPageCount: maxDatabaseMegabytes.map { $0 * 256 },
            tombstoneRetention: .seconds(Int64(tombstoneRetentionDays) * 86_400),
            sampleRetention: retentionDays.map { .seconds(Int64($0) * 86_400) }, keepWorkoutSamples: keepWorkoutSamples)
    }
}

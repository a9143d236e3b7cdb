import AsyncPrimitives
public import Foundation
public import HealthModel
public import SampleBus
import SQLite

/// The order of query results by start date.
public enum SampleOrder: String, Hashable, Sendable, CaseIterable {
    /// Oldest first.
    case ascending = "asc"
    /// Newest first.
    case descending = "desc"
}

/// A workout read back with the records it links to.
public struct StoredWorkout: Hashable, Sendable {
    /// The workout with its events, activities, statistics and the uuids of its samples.
    public var workout: Workout
    /// The linked quantity samples that are in the store, by start date.
    public var samples: [QuantitySample]
    /// The linked heartbeat series that are in the store, by start date.
    public var heartbeatSeries: [HeartbeatSeriesSample]

    /// Bundles a workout with the linked records found in the store.
    public init(workout: Workout, samples: [QuantitySample], heartbeatSeries: [HeartbeatSeriesSample]) {
        self.workout = workout
        self.samples = samples
        self.heartbeatSeries = heartbeatSeries
    }
}

/// Read access to a store file: samples, statistics, heartbeat series and workouts.
///
/// Opens the file read-only, so it can run beside the gateway's writer (WAL mode: readers see the
/// last committed transaction and never block the writer; a busy timeout covers checkpoints).
/// Each query runs in one read transaction. Queries whose work grows with the data (statistics,
/// ranges of samples, changes) run on the store's serial DispatchQueue, never on the cooperative
/// pool; short reads of bounded work (the newest sample, the earliest date, a checkpoint) run in
/// the caller's context on a second connection, since the hop to the queue and back costs more
/// than they do (see ``shortRead(_:)``). Every failure is a typed ``StoreError``; nothing fails
/// silently.
///
/// Reads schema version 1 too: being read-only, it cannot upgrade a file, and a file stays at
/// version 1 until a writer (the gateway) opens it. Each query looks at the version it reads.
///
/// Range rules: a sample is in `[from, to)` when its start date is; the exception is a cumulative
/// sample in statistics, which counts in every interval it overlaps (see ``statistics(of:from:to:)``).
public final class SQLiteSampleStore: Sendable {
    /// The database file.
    public let path: String
    private let database: SQLiteDatabase
    /// A second read-only connection for short reads, used in the caller's context (see
    /// ``shortRead(_:)``).
    private let inline: SQLiteInlineReader
    /// Whether the file had metadata sets (schema version 2 on) when it was opened. Versions only
    /// grow, so it still has them.
    private let hasMetadataSets: Bool

    /// Opens the store at `path` read-only.
    /// - Throws: ``StoreError`` `.notFound` when the file does not exist, `.notAStore` when it has
    ///   no healthgate schema, `.schemaTooNew` when a newer healthgate wrote it.
    public init(path: String) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.notFound, path: path, message: "no database file at \(path)")
        }
        self.path = path
        do {
            let version: Int
            (database, version) = try SQLiteDatabase.opening(path: path, mode: .readOnly, label: "sqlite-store") {
                connection throws(SQLiteError) in try connection.userVersion
            }
            guard version > 0 else {
                throw StoreError(.notAStore, path: path, message: "the file has no healthgate schema (user_version 0)")
            }
            guard version <= StoreSchema.version else {
                throw StoreError(
                    .schemaTooNew, path: path,
                    message: "schema version \(version) is newer than this program knows (\(StoreSchema.version)); upgrade healthgate")
            }
            inline = try SQLiteInlineReader(path: path)
            hasMetadataSets = version >= 2
        } catch let error as SQLiteError {
            throw StoreError(error, path: path)
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    /// ``init(path:)`` on a queue of its own: opening blocks, so async code opens stores this way.
    public static func open(path: String) async throws(StoreError) -> SQLiteSampleStore {
        try await QueueExecutor(label: "healthgate.sqlite-store.open").run { () throws(StoreError) in
            try SQLiteSampleStore(path: path)
        }
    }

    // MARK: Samples

    /// The samples of `type` whose start date is in `[from, to)` (either bound may be nil) and
    /// that `filter` matches, ordered by start date (then uuid), at most `limit` of them.
    public func samples(
        of type: QuantityType, from: Date? = nil, to: Date? = nil, limit: Int? = nil,
        order: SampleOrder = .ascending, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [QuantitySample] {
        if let limit, limit < 0 {
            throw StoreError(.invalidArgument, path: path, message: "limit must not be negative, got \(limit)")
        }
        let direction = order == .ascending ? "ASC" : "DESC"
        let bindings: [SQLiteValue] = [
            .text(type.identifier), .integer(from.map(SQLiteSampleWriter.microseconds) ?? .min),
            .integer(to.map(SQLiteSampleWriter.microseconds) ?? .max), .integer(Int64(limit ?? -1)),
        ]
        return try await read { connection throws(StoreError) in
            try self.requireFilterSupport(filter, connection)
            return try RowDecoder.samples(
                connection, where: "s.type = ?1 AND s.start_us >= ?2 AND s.start_us < ?3\(filter.condition(alias: "s").sql)",
                orderBy: "s.start_us \(direction), s.uuid \(direction) LIMIT ?4", filter.bindings(after: bindings),
                path: self.path)
        }
    }

    /// The sample of `type` with the latest start date (ties: the greatest uuid), or nil.
    ///
    /// A short read (one step down the `(type, start_us)` index, one device, one metadata set):
    /// it runs in the caller's context, see ``shortRead(_:)``, as one statement that joins the
    /// sample, its device and its metadata entries. A file without metadata sets (version 1)
    /// takes the general path: the sample, then its metadata by owner, in one transaction.
    public func mostRecentSample(of type: QuantityType) async throws(StoreError) -> QuantitySample? {
        guard hasMetadataSets else {
            let bindings: [SQLiteValue] = [.text(type.identifier)]
            return try await shortRead { connection throws(StoreError) in
                try RowDecoder.samples(
                    connection, where: "s.type = ?1", orderBy: "s.start_us DESC, s.uuid DESC LIMIT 1", bindings,
                    path: self.path
                ).first
            }
        }
        // shortRead's two halves by hand: the inline read allocates no closure, and only the
        // fallback builds the escaping one for the queue (callgrind: about 1 000 instructions of
        // a 38 000-instruction call).
        let path = self.path
        if let sample = try inlineRead(oneStatement: true, { connection throws(StoreError) in
            try RowDecoder.newestSample(connection, of: type, path: path)
        }) {
            return sample
        }
        return try await read { connection throws(StoreError) in
            try RowDecoder.newestSample(connection, of: type, path: path)
        }
    }

    /// The start date of the oldest sample of `type`, or nil when there is none.
    ///
    /// A short read (the first entry of the `(type, start_us)` index), see ``shortRead(_:)``.
    public func earliestSampleDate(of type: QuantityType) async throws(StoreError) -> Date? {
        try await shortRead { connection throws(StoreError) in
            let rows = try Self.run(connection, "SELECT min(start_us) FROM samples WHERE type = ?1",
                                    [.text(type.identifier)], path: self.path)
            return rows.first?.integer(0).map(SQLiteSampleWriter.date(microseconds:))
        }
    }

    // MARK: Statistics

    /// Statistics of `type` over `[from, to)`, in the type's canonical unit.
    ///
    /// - Discrete types: `average` (arithmetic mean), `minimum`, `maximum` and `mostRecent` (the
    ///   sample with the latest start date) over the samples whose start date is in the interval.
    /// - Cumulative types: `sum`. A sample lying across an interval boundary is split in
    ///   proportion to time: it contributes `value × overlap / duration` to each interval it
    ///   overlaps (as HealthKit does), so splitting a range into buckets never changes the total.
    ///   A sample of zero duration counts wholly in the interval that contains its start.
    ///   `sampleCount` counts the samples that contributed.
    /// An interval without samples has `sampleCount == 0` and nil values.
    ///
    /// `options` picks the values computed (nil: every one of the type's aggregation style); a
    /// value not asked for is nil, and options of the other style are refused with
    /// `.invalidArgument`, as HealthKit refuses them. `filter` narrows the samples counted to one
    /// device and/or metadata entries.
    public func statistics(
        of type: QuantityType, from: Date, to: Date, options: StatisticsOptions? = nil, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> QuantityStatistics {
        let start = SQLiteSampleWriter.microseconds(from)
        let end = SQLiteSampleWriter.microseconds(to)
        guard end > start else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        let buckets = try await statistics(of: type, edges: [start, end], options: options, filter: filter)
        return buckets[0]
    }

    /// Statistics of `type` in consecutive intervals of length `interval`, aligned on `anchor`
    /// (bucket k is `[anchor + k·interval, anchor + (k+1)·interval)`), for every bucket that
    /// overlaps `[from, to)`. Buckets are whole: the first may start before `from` and the last
    /// may end after `to`, and they cover their whole interval. Empty buckets are reported, with
    /// `sampleCount == 0`. The values follow ``statistics(of:from:to:)``.
    ///
    /// Buckets are fixed lengths of time: a "day" is 86 400 s from the anchor, whatever the
    /// calendar or daylight-saving time says; calendar buckets are
    /// ``statisticsCollection(of:from:to:anchor:interval:timeZone:)``.
    /// - Throws: `.invalidArgument` when `interval` is not positive, the range is empty, or it
    ///   would give more than 1 000 000 buckets.
    public func statisticsCollection(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: Duration,
        options: StatisticsOptions? = nil, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [QuantityStatistics] {
        let edges = try fixedEdges(from: from, to: to, anchor: anchor, interval: interval)
        return try await statistics(of: type, edges: edges, options: options, filter: filter)
    }

    /// The bucket edges, in µs, of the buckets of length `interval` from `anchor` that cover `[from, to)`.
    private func fixedEdges(from: Date, to: Date, anchor: Date, interval: Duration) throws(StoreError) -> [Int64] {
        let width = interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000
        guard width > 0 else {
            throw StoreError(.invalidArgument, path: path, message: "the interval must be positive, got \(interval)")
        }
        let start = SQLiteSampleWriter.microseconds(from)
        let end = SQLiteSampleWriter.microseconds(to)
        guard end > start else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        let anchorMicros = SQLiteSampleWriter.microseconds(anchor)
        let offset = start - anchorMicros
        // Floor division, so that a range before the anchor aligns too.
        let firstIndex = offset >= 0 ? offset / width : -((-offset + width - 1) / width)
        let firstBucket = anchorMicros + firstIndex * width
        let count = (end - firstBucket + width - 1) / width
        guard count <= Int64(Self.maximumBuckets) else {
            throw StoreError(.invalidArgument, path: path, message: "the range would give \(count) buckets; use a longer interval")
        }
        return (0...count).map { firstBucket + $0 * width }
    }

    /// Statistics of `type` in calendar buckets of `interval` in `timeZone`, counted from
    /// `anchor` (bucket k starts at the anchor plus k intervals, in the calendar of the time
    /// zone), for every bucket that overlaps `[from, to)`, as HealthKit's statistics collections
    /// do. A day bucket runs from local midnight to local midnight (with a midnight anchor), so
    /// the day of a daylight-saving change is one bucket of 23 or 25 hours; months have their
    /// calendar lengths. Buckets are whole and empty ones are reported, as in
    /// ``statisticsCollection(of:from:to:anchor:interval:)``.
    /// - Throws: `.invalidArgument` when `interval.count` is not positive, the range is empty, or
    ///   it would give more than 1 000 000 buckets.
    public func statisticsCollection(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: CalendarInterval, timeZone: TimeZone,
        options: StatisticsOptions? = nil, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [QuantityStatistics] {
        let edges = try calendarEdges(from: from, to: to, anchor: anchor, interval: interval, timeZone: timeZone)
        return try await statistics(of: type, edges: edges, options: options, filter: filter)
    }

    /// The bucket edges, in µs, of the calendar buckets that cover `[from, to)`.
    private func calendarEdges(
        from: Date, to: Date, anchor: Date, interval: CalendarInterval, timeZone: TimeZone
    ) throws(StoreError) -> [Int64] {
        guard interval.count > 0 else {
            throw StoreError(.invalidArgument, path: path, message: "the interval count must be positive, got \(interval.count)")
        }
        guard to > from else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let unrepresentable = StoreError(
            .invalidArgument, path: path, message: "the range is too far from the anchor for \(interval) buckets")
        func start(_ index: Int) throws(StoreError) -> Date {
            guard let date = interval.bucketStart(index, anchor: anchor, calendar: calendar) else { throw unrepresentable }
            return date
        }
        // Months vary by under 10 % around their average, so this refuses only ranges that are
        // surely too long, before the calendar walks them.
        guard to.timeIntervalSince(from) / interval.approximateSeconds <= Double(Self.maximumBuckets) * 1.1 else {
            throw StoreError(
                .invalidArgument, path: path,
                message: "the range would give more than \(Self.maximumBuckets) buckets; use a longer interval")
        }
        // An estimate from the average bucket length, corrected by the calendar.
        let estimate = (from.timeIntervalSince(anchor) / interval.approximateSeconds).rounded(.down)
        guard estimate.magnitude < 1e12 else { throw unrepresentable }
        var index = Int(estimate)
        while try start(index) > from { index -= 1 }
        while try start(index + 1) <= from { index += 1 }
        var edges = [SQLiteSampleWriter.microseconds(try start(index))]
        while let last = edges.last, last < SQLiteSampleWriter.microseconds(to) {
            guard edges.count <= Self.maximumBuckets else {
                throw StoreError(
                    .invalidArgument, path: path,
                    message: "the range would give more than \(Self.maximumBuckets) buckets; use a longer interval")
            }
            index += 1
            edges.append(SQLiteSampleWriter.microseconds(try start(index)))
        }
        return edges
    }

    /// The most buckets one statistics collection returns: bounds the memory a query can take.
    static let maximumBuckets = 1_000_000

    private func statistics(
        of type: QuantityType, edges: [Int64], options: StatisticsOptions?, filter: SampleFilter
    ) async throws(StoreError) -> [QuantityStatistics] {
        let options = options ?? .all(for: type.aggregationStyle)
        if let problem = options.problem(for: type) {
            throw StoreError(.invalidArgument, path: path, message: problem)
        }
        return try await read { connection throws(StoreError) in
            try self.requireFilterSupport(filter, connection)
            return switch type.aggregationStyle {
            case .discrete:
                try StatisticsCalculator.discrete(
                    connection, type: type, edges: edges, options: options, filter: filter, path: self.path)
            case .cumulative:
                try StatisticsCalculator.cumulative(connection, type: type, edges: edges, filter: filter, path: self.path)
            }
        }
    }

    // MARK: Statistics separated by device

    /// ``statistics(of:from:to:filter:)`` separated by device, as HealthKit's `separateBySource`
    /// option: the overall statistics (equal to the unseparated ones) and those of each device
    /// with samples in the range. A device is its name, manufacturer, model and local identifier
    /// (see ``DeviceStatistics/device``); a cumulative sample that crosses a bucket edge is split
    /// for its device as it is overall, so the devices' sums add up to the overall sum.
    public func statisticsByDevice(
        of type: QuantityType, from: Date, to: Date, filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> StatisticsByDevice {
        let start = SQLiteSampleWriter.microseconds(from)
        let end = SQLiteSampleWriter.microseconds(to)
        guard end > start else {
            throw StoreError(.invalidArgument, path: path, message: "the range must end after it starts")
        }
        return try await statisticsByDevice(of: type, edges: [start, end], filter: filter)[0]
    }

    /// ``statisticsCollection(of:from:to:anchor:interval:filter:)`` (fixed-length buckets)
    /// separated by device: per bucket, the overall statistics and each device's.
    public func statisticsCollectionByDevice(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: Duration,
        filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [StatisticsByDevice] {
        let edges = try fixedEdges(from: from, to: to, anchor: anchor, interval: interval)
        return try await statisticsByDevice(of: type, edges: edges, filter: filter)
    }

    /// ``statisticsCollection(of:from:to:anchor:interval:timeZone:filter:)`` (calendar buckets)
    /// separated by device: per bucket, the overall statistics and each device's.
    public func statisticsCollectionByDevice(
        of type: QuantityType, from: Date, to: Date, anchor: Date, interval: CalendarInterval, timeZone: TimeZone,
        filter: SampleFilter = SampleFilter()
    ) async throws(StoreError) -> [StatisticsByDevice] {
        let edges = try calendarEdges(from: from, to: to, anchor: anchor, interval: interval, timeZone: timeZone)
        return try await statisticsByDevice(of: type, edges: edges, filter: filter)
    }

    /// The overall statistics and each device's, in one read transaction so that both see the
    /// same samples.
    private func statisticsByDevice(
        of type: QuantityType, edges: [Int64], filter: SampleFilter
    ) async throws(StoreError) -> [StatisticsByDevice] {
        try await read { connection throws(StoreError) in
            try self.requireFilterSupport(filter, connection)
            let overall = switch type.aggregationStyle {
            case .discrete:
                try StatisticsCalculator.discrete(connection, type: type, edges: edges, filter: filter, path: self.path)
            case .cumulative:
                try StatisticsCalculator.cumulative(connection, type: type, edges: edges, filter: filter, path: self.path)
            }
            let devices = try StatisticsCalculator.byDevice(connection, type: type, edges: edges, filter: filter, path: self.path)
            return zip(overall, devices).map { StatisticsByDevice(overall: $0, devices: $1) }
        }
    }

    /// A metadata filter needs metadata sets (schema version 2); a version-1 file the gateway
    /// has not upgraded yet has none.
    private func requireFilterSupport(_ filter: SampleFilter, _ connection: SQLiteConnection) throws(StoreError) {
        guard !filter.metadata.isEmpty else { return }
        let version: Int
        do {
            version = try connection.userVersion
        } catch {
            throw StoreError(error, path: path)
        }
        guard version >= 2 else {
            throw StoreError(
                .schemaTooOld, path: path,
                message: "schema version \(version) has no metadata sets; start the gateway once to upgrade the file")
        }
    }

    // MARK: Heartbeat series

    /// The heartbeat series whose start date is in `[from, to)`, by start date, with their beats.
    public func heartbeatSeries(from: Date? = nil, to: Date? = nil) async throws(StoreError) -> [HeartbeatSeriesSample] {
        let bindings: [SQLiteValue] = [
            .integer(from.map(SQLiteSampleWriter.microseconds) ?? .min),
            .integer(to.map(SQLiteSampleWriter.microseconds) ?? .max),
        ]
        return try await read { connection throws(StoreError) in
            try RowDecoder.heartbeatSeries(
                connection, where: "h.start_us >= ?1 AND h.start_us < ?2", bindings, path: self.path)
        }
    }

    // MARK: Correlations

    /// The correlations of `type` whose start date is in `[from, to)`, by start date, each with
    /// its member samples.
    public func correlations(
        of type: CorrelationType, from: Date? = nil, to: Date? = nil
    ) async throws(StoreError) -> [CorrelationSample] {
        let bindings: [SQLiteValue] = [
            .text(type.identifier),
            .integer(from.map(SQLiteSampleWriter.microseconds) ?? .min),
            .integer(to.map(SQLiteSampleWriter.microseconds) ?? .max),
        ]
        return try await read { connection throws(StoreError) in
            try RowDecoder.correlations(
                connection, where: "c.type = ?1 AND c.start_us >= ?2 AND c.start_us < ?3", bindings, path: self.path)
        }
    }

    // MARK: Workouts

    /// The workouts whose start date is in `[from, to)`, by start date, each with its events,
    /// activities, statistics and linked sample uuids.
    public func workouts(from: Date? = nil, to: Date? = nil) async throws(StoreError) -> [Workout] {
        let bindings: [SQLiteValue] = [
            .integer(from.map(SQLiteSampleWriter.microseconds) ?? .min),
            .integer(to.map(SQLiteSampleWriter.microseconds) ?? .max),
        ]
        return try await read { connection throws(StoreError) in
            try RowDecoder.workouts(connection, where: "start_us >= ?1 AND start_us < ?2", bindings, path: self.path)
        }
    }

    /// One workout with the quantity samples and heartbeat series it links to; nil when no
    /// workout has this uuid. Linked records not (yet) in the store are listed in
    /// `workout.sampleIDs` but absent from `samples` and `heartbeatSeries`.
    public func workout(id: SampleID) async throws(StoreError) -> StoredWorkout? {
        try await read { connection throws(StoreError) in
            let key = SQLiteValue.blob(id.bytes)
            guard let workout = try RowDecoder.workouts(connection, where: "uuid = ?1", [key], path: self.path).first
            else { return nil }
            let samples = try RowDecoder.samples(
                connection, where: "s.uuid IN (SELECT sample_uuid FROM workout_samples WHERE workout_uuid = ?1)",
                orderBy: "s.start_us, s.uuid", [key], path: self.path)
            let series = try RowDecoder.heartbeatSeries(
                connection, where: "h.uuid IN (SELECT sample_uuid FROM workout_samples WHERE workout_uuid = ?1)",
                [key], path: self.path)
            return StoredWorkout(workout: workout, samples: samples, heartbeatSeries: series)
        }
    }

    // MARK: Source checkpoints

    /// The checkpoint stored for `key` in `namespace`, or nil (also for a file below schema
    /// version 3, which has no checkpoints yet).
    ///
    /// A short read (a primary-key lookup), see ``shortRead(_:)``.
    public func sourceCheckpoint(namespace: String, key: String) async throws(StoreError) -> SourceCheckpoint? {
        let path = self.path
        return try await shortRead { connection throws(StoreError) in
            let version: Int
            do {
                version = try connection.userVersion
            } catch {
                throw StoreError.wrap(error, path: path)
            }
            guard version >= 3 else { return nil }
            let rows = try Self.run(
                connection, StoreSchema.selectSourceCheckpoint, [.text(namespace), .text(key)], path: path)
            guard let payload = rows.first?.blob(0) else { return nil }
            return SourceCheckpoint(namespace: namespace, key: key, payload: Data(payload))
        }
    }

    // MARK: Plumbing

    /// Runs `body` in one read transaction on the inline reader, in the caller's context, when
    /// it is free; otherwise (another call holds it, or SQLite answers busy at once) on the
    /// database queue with ``read(_:)``. A `body` that runs `oneStatement` needs no transaction
    /// of its own: SQLite's implicit one makes the statement consistent, and BEGIN and COMMIT
    /// would cost a good part of a short read.
    ///
    /// Only for reads whose work is bounded whatever the data (a step down an index, a lookup by
    /// key): they take microseconds, less than the hop to the queue and back, and so may block
    /// the calling thread, even one of the cooperative pool, for that long. Everything that scans
    /// (statistics, ranges of samples, change logs) goes through ``read(_:)``.
    func shortRead<T: Sendable>(
        oneStatement: Bool = false, _ body: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        if let result = try inlineRead(oneStatement: oneStatement, body) { return result }
        return try await read(body)
    }

    /// The inline half of ``shortRead(oneStatement:_:)``: `body`'s result, or nil when the
    /// inline reader is taken or SQLite answers busy (the caller then reads on the queue).
    /// Synchronous and with a non-escaping `body`, so that a caller on a hot path can try it
    /// without allocating the escaping closure the queue needs (``mostRecentSample(of:)``).
    @inline(__always)
    private func inlineRead<T: Sendable>(
        oneStatement: Bool, _ body: (SQLiteConnection) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        let path = self.path
        do throws(StoreError) {
            return try inline.readIfAvailable { connection throws(StoreError) -> T in
                if oneStatement { return try body(connection) }
                do {
                    return try connection.transaction(.deferred) { try body(connection) }
                } catch {
                    throw StoreError.wrap(error, path: path)
                }
            }
        } catch where error.code == .busy {
            // The queue's connection waits out the lock (busy timeout); the inline one must not.
            return nil
        }
    }

    /// Runs `body` in one read transaction on the database queue.
    func read<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        let path = self.path
        do {
            return try await database.perform { connection in
                try connection.transaction(.deferred) { try body(connection) }
            }
        } catch {
            throw StoreError.wrap(error, path: path)
        }
    }

    static func run(
        _ connection: SQLiteConnection, _ sql: String, _ bindings: [SQLiteValue], path: String
    ) throws(StoreError) -> [SQLiteRow] {
        do {
            return try connection.query(sql, bindings)
        } catch {
            throw StoreError(error, path: path)
        }
    }
}

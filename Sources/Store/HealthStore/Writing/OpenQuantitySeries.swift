import HealthModel

/// A quantity series the writer is still adding to, as its row holds it plus what appending
/// needs (the encoder's state) and when it last grew on the writer's monotonic clock.
///
/// A value: the writer's ``OpenSeriesTable`` keeps the committed ones and a transaction's
/// changed copies apart, so a rolled back transaction leaves the committed ones as they were.
struct OpenQuantitySeries: Sendable {
    /// What makes readings belong to one series: the type, the unit they were recorded in, the
    /// device and the metadata set (rows of the store, by id).
    struct Key: Hashable, Sendable {
        var typeID: Int64
        var unitID: Int64
        var deviceID: Int64?
        var metadataSetID: Int64?
    }

    let id: SampleID
    let type: QuantityType
    let key: Key
    /// The row's anchor; nil until the row is first written.
    var anchor: Int64?
    var startUs: Int64
    var lastStartUs: Int64
    var endUs: Int64
    var sum: Double
    var minimum: Double
    var maximum: Double
    /// The last quantity's value in the type's canonical unit, and as recorded.
    var lastValue: Double
    var lastRecorded: Double
    /// The version the row holds (or will hold once written).
    var version: Int64
    var encoded: QuantitySeriesEncoding.Appender
    /// When a quantity was last added, or the series loaded, on the writer's monotonic clock.
    var lastGrew: Duration
    /// Whether this writer added to it (a series another process left open, loaded from its
    /// row, is not this writer's to close when it closes).
    var grewHere = false

    var count: Int { encoded.count }

    /// A new series of the one reading `start`/`end` (µs), `recorded` in the key's unit and
    /// `canonical` in the type's.
    init(id: SampleID, type: QuantityType, key: Key, start: Int64, end: Int64, recorded: Double, canonical: Double, now: Duration) {
        self.id = id
        self.type = type
        self.key = key
        startUs = start
        lastStartUs = start
        endUs = end
        sum = canonical
        minimum = canonical
        maximum = canonical
        lastValue = canonical
        lastRecorded = recorded
        version = 1
        encoded = QuantitySeriesEncoding.Appender(
            scale: QuantitySeriesEncoding.commonScale(of: [recorded]), durations: end != start)
        encoded.append(QuantitySeriesEncoding.Quantity(offset: 0, duration: end - start, value: recorded))
        lastGrew = now
        grewHere = true
    }

    /// A series read back from its row.
    init(
        id: SampleID, type: QuantityType, key: Key, anchor: Int64, startUs: Int64, lastStartUs: Int64, endUs: Int64,
        sum: Double, minimum: Double, maximum: Double, lastValue: Double, version: Int64,
        encoded: QuantitySeriesEncoding.Appender, lastRecorded: Double, now: Duration
    ) {
        self.id = id
        self.type = type
        self.key = key
        self.anchor = anchor
        self.startUs = startUs
        self.lastStartUs = lastStartUs
        self.endUs = endUs
        self.sum = sum
        self.minimum = minimum
        self.maximum = maximum
        self.lastValue = lastValue
        self.version = version
        self.encoded = encoded
        self.lastRecorded = lastRecorded
        lastGrew = now
    }

    /// What a reading does to this series (``QuantitySeriesPolicy``).
    enum Fit: Equatable {
        /// It belongs here.
        case append
        /// The same start and value as the last quantity: a reading delivered twice.
        case duplicate
        /// It starts a new series, and this one is closed.
        case closeAndStart
        /// It starts before this series' last quantity: a late reading, kept as a sample of its own.
        case outOfOrder
    }

    func fit(start: Int64, recorded: Double, policy: QuantitySeriesPolicy) -> Fit {
        if start < lastStartUs { return .outOfOrder }
        if start == lastStartUs, recorded == lastRecorded { return .duplicate }
        if start - startUs > Self.microseconds(policy.maximumSpan) || start - endUs > Self.microseconds(policy.maximumGap)
            || count >= policy.maximumCount
        {
            return .closeAndStart
        }
        return .append
    }

    /// Adds a reading that ``fit(start:recorded:policy:)`` said belongs here.
    mutating func append(start: Int64, end: Int64, recorded: Double, canonical: Double, now: Duration) {
        encoded.append(QuantitySeriesEncoding.Quantity(offset: start - startUs, duration: end - start, value: recorded))
        lastStartUs = start
        endUs = max(endUs, end)
        sum += canonical
        minimum = min(minimum, canonical)
        maximum = max(maximum, canonical)
        lastValue = canonical
        lastRecorded = recorded
        lastGrew = now
        grewHere = true
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}

/// The writer's open quantity series: the committed ones by key, and a transaction's changes
/// (series grown, started or closed) kept apart until it commits.
struct OpenSeriesTable {
    /// The open series as the last committed transaction left them.
    private(set) var committed: [OpenQuantitySeries.Key: OpenQuantitySeries] = [:]
    /// Within a transaction: the series it changed, open ones by key (a key whose series it
    /// closed without starting another maps to nil).
    private var staged: [OpenQuantitySeries.Key: OpenQuantitySeries?] = [:]
    /// Within a transaction: the series it closed, to write as closed.
    private(set) var closed: [OpenQuantitySeries] = []
    /// Within a transaction: the keys whose rows were checked against the database.
    private var checked: Set<OpenQuantitySeries.Key> = []

    /// The open series of `key` as the transaction sees it.
    subscript(key: OpenQuantitySeries.Key) -> OpenQuantitySeries? {
        if let change = staged[key] { return change }
        return committed[key]
    }

    /// Whether the transaction confirmed that `key`'s committed series is still in the database.
    func isChecked(_ key: OpenQuantitySeries.Key) -> Bool { checked.contains(key) }

    mutating func markChecked(_ key: OpenQuantitySeries.Key) { checked.insert(key) }

    /// Sets the open series of a key within the transaction.
    mutating func stage(_ series: OpenQuantitySeries) {
        staged[series.key] = .some(series)
    }

    /// Forgets `key`'s series within the transaction: its row is gone (deleted by another
    /// process, pruned) or it was closed.
    mutating func drop(_ key: OpenQuantitySeries.Key) {
        staged[key] = .some(nil)
    }

    /// Closes `series` within the transaction: it is written as closed, and its key has no open
    /// series until another starts.
    mutating func close(_ series: OpenQuantitySeries) {
        closed.append(series)
        drop(series.key)
    }

    /// The open series the transaction changed (to write).
    var changed: [OpenQuantitySeries] {
        staged.values.compactMap { $0 }
    }

    /// Replaces a staged series by the one written (with its anchor and version).
    mutating func written(_ series: OpenQuantitySeries) {
        staged[series.key] = .some(series)
    }

    /// After a commit: the transaction's changes become the committed state.
    mutating func commit() {
        for (key, change) in staged {
            committed[key] = change
        }
        staged = [:]
        closed = []
        checked = []
    }

    /// After a rollback: the transaction's changes are forgotten.
    mutating func rollback() {
        staged = [:]
        closed = []
        checked = []
    }

    /// Replaces the committed state (at open, from the rows).
    mutating func load(_ series: [OpenQuantitySeries]) {
        committed = Dictionary(series.map { ($0.key, $0) }, uniquingKeysWith: { first, second in
            first.startUs >= second.startUs ? first : second
        })
    }

    /// Every open series as the transaction sees it.
    var all: [OpenQuantitySeries] {
        var merged = committed
        for (key, change) in staged { merged[key] = change }
        return Array(merged.values)
    }
}

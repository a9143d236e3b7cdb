public import FoundationEssentials
public import HealthModel

/// One quantity sample collected into a workout, reduced to what statistics need.
public struct CollectedSample: Hashable, Sendable, Codable {
    /// The sample's identifier (linked to the workout).
    public var id: SampleID
    /// The quantity type.
    public var type: QuantityType
    /// Start of the measured interval.
    public var startDate: Date
    /// End of the measured interval; what decides whether it falls in running time.
    public var endDate: Date
    /// The value in the type's canonical unit.
    public var value: Double

    /// Creates a collected sample.
    public init(id: SampleID, type: QuantityType, startDate: Date, endDate: Date, value: Double) {
        self.id = id
        self.type = type
        self.startDate = startDate
        self.endDate = endDate
        self.value = value
    }
}

/// Collects samples into a live workout (HKLiveWorkoutBuilder's data collection).
///
/// A quantity sample is collected when its type is one of the session's types, its device is one
/// of the session's devices (or the session takes every device), and its end date lies in a
/// running interval. A heartbeat series is collected when the session collects heart rate, its
/// device matches, and it overlaps a running interval (so the series being recorded when the
/// workout pauses or ends belongs to it). Samples from pauses are left out, and a sample that
/// arrives late (queued on the bus) still counts for the interval it was measured in. Duplicates
/// (a batch redelivered after a sink restart, a sample collected live and read back from the
/// store) are recognised by id and counted once. Heart-rate statistics come from the `heartRate`
/// samples; series are linked by id.
///
/// Bounded: at most ``capacity`` samples and series (more than a day of one-per-second heart
/// rate, steps and distance). Beyond that, new records are refused and counted in
/// ``refusedCount``; what was collected stays intact.
public struct LiveWorkoutBuilder: Sendable {
    /// The most samples plus heartbeat series one workout collects.
    public static let capacity = 300_000

    /// Collected samples, ordered by end date.
    public private(set) var samples: [CollectedSample] = []
    /// Counts the changes to ``samples`` other than an append at the end (a late sample inserted
    /// in order, a prune): a reader that follows ``samples`` by index (``RunningFigures``) starts
    /// over when it changes.
    public private(set) var reorderings = 0
    /// Heartbeat series collected, by id.
    public private(set) var heartbeatSeriesIDs: [SampleID] = []
    /// Records refused because the builder was full.
    public private(set) var refusedCount = 0
    private var seen: Set<SampleID> = []
    // Start and end of each collected series, so that a pause or the end can drop the series it
    // no longer overlaps.
    private var seriesSpans: [SampleID: (start: Date, end: Date)] = [:]

    /// An empty builder.
    public init() {}

    /// Every collected id, samples then heartbeat series.
    public var sampleIDs: [SampleID] { samples.map(\.id) + heartbeatSeriesIDs }

    /// Whether the builder would take `record` for `session` (state, type, device, running interval).
    public static func wants(_ record: HealthRecord, session: WorkoutSession) -> Bool {
        guard session.state == .running || session.state == .paused || session.state == .stopped else { return false }
        return matches(record, session: session)
    }

    /// Whether `record` belongs to `session` by type, device and running intervals, whatever the
    /// session's state (used to rebuild an ended workout from its store).
    public static func matches(_ record: HealthRecord, session: WorkoutSession) -> Bool {
        switch record {
        case .quantity(let sample):
            guard session.types.contains(sample.type), matchesDevice(record.device, session) else { return false }
            return session.timeline.contains(sample.endDate)
        case .heartbeatSeries(let series):
            guard session.types.contains(.heartRate), matchesDevice(record.device, session) else { return false }
            return session.timeline.overlaps(start: series.startDate, end: series.endDate)
        case .workout, .correlation:
            return false
        }
    }

    private static func matchesDevice(_ device: Device?, _ session: WorkoutSession) -> Bool {
        Device.matches(device, selection: session.devices)
    }

    /// Adds `record` if ``wants(_:session:)``, it is new, and there is room (else it is counted
    /// in ``refusedCount``). Returns whether it was added.
    @discardableResult
    public mutating func add(_ record: HealthRecord, session: WorkoutSession, capacity: Int = LiveWorkoutBuilder.capacity) -> Bool {
        guard Self.wants(record, session: session) else { return false }
        return insert(record, capacity: capacity)
    }

    /// Adds `record` if it ``matches(_:session:)`` whatever the session's state, is new, and fits.
    @discardableResult
    mutating func addMatching(_ record: HealthRecord, session: WorkoutSession, capacity: Int = LiveWorkoutBuilder.capacity) -> Bool {
        guard Self.matches(record, session: session) else { return false }
        return insert(record, capacity: capacity)
    }

    /// Drops what no longer matches `session`'s running intervals: samples collected between
    /// a pause or the end and the moment it was applied.
    mutating func prune(to session: WorkoutSession) {
        let timeline = session.timeline
        let dropped = samples.filter { !timeline.contains($0.endDate) }.map(\.id)
            + heartbeatSeriesIDs.filter { id in
                seriesSpans[id].map { !timeline.overlaps(start: $0.start, end: $0.end) } ?? false
            }
        guard !dropped.isEmpty else { return }
        let set = Set(dropped)
        samples.removeAll { set.contains($0.id) }
        reorderings += 1
        heartbeatSeriesIDs.removeAll { set.contains($0) }
        for id in dropped {
            seen.remove(id)
            seriesSpans[id] = nil
        }
    }

    private mutating func insert(_ record: HealthRecord, capacity: Int) -> Bool {
        guard !seen.contains(record.id) else { return false }
        guard seen.count < capacity else {
            refusedCount += 1
            return false
        }
        seen.insert(record.id)
        switch record {
        case .quantity(let sample):
            let collected = CollectedSample(
                id: sample.id, type: sample.type, startDate: sample.startDate, endDate: sample.endDate,
                value: sample.canonicalValue)
            // Usually appended at the end; a late sample is inserted in order.
            let index = samples.lastIndex { $0.endDate <= collected.endDate }.map { $0 + 1 } ?? 0
            if index < samples.count { reorderings += 1 }
            samples.insert(collected, at: index)
        case .heartbeatSeries(let series):
            heartbeatSeriesIDs.append(series.id)
            seriesSpans[series.id] = (series.startDate, series.endDate)
        case .workout, .correlation:
            return false
        }
        return true
    }
}

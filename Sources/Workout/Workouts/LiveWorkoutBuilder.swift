public import FoundationEssentials
public import HealthModel

/// One quantity sample collected into a workout, reduced to what statistics need.
public struct CollectedSample: Hashable, Sendable, Codable {
    /// The reading's identity (``key(of:)``): what it measured, when and on which device, so a
    /// reading collected live and read back from the store, where it may be a quantity of a
    /// series with an id of its own, is the same sample.
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

    /// The identity of the reading `sample` holds: two FNV-1a digests (64 bits each) of its type,
    /// its device's identity, its start and end at the store's resolution (the microsecond) and
    /// its value's bits, as a UUID. Equal readings have equal keys wherever their ids came from.
    public static func key(of sample: QuantitySample) -> SampleID {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        func absorb(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                second = (second ^ UInt64(byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
            }
            first = (first ^ 0xFF) &* 0x0000_0100_0000_01B3
        }
        func absorb(_ word: UInt64) { absorb((0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) }) }
        func micros(_ date: Date) -> UInt64 { UInt64(bitPattern: Int64((date.timeIntervalSince1970 * 1_000_000).rounded())) }
        absorb(sample.type.identifier.utf8)
        if let device = sample.device {
            for field in [device.name, device.manufacturer, device.model, device.localIdentifier, device.radioIdentifier] {
                absorb((field ?? "").utf8)
            }
        }
        absorb(micros(sample.startDate))
        absorb(micros(sample.endDate))
        absorb(sample.canonicalValue.bitPattern)
        return SampleID(high: first, low: second)
    }
}

/// Collects samples into a live workout (HKLiveWorkoutBuilder's data collection).
///
/// A quantity sample is collected when its type is one of the session's types, it is the
/// session's (``belongs(_:to:selection:)``: its device is one of the session's devices, or the
/// session takes every device; a participant's workout takes their readings by attribution),
/// and its end date lies in a running interval. A heartbeat series is collected when the session collects heart rate, its
/// device matches, and it overlaps a running interval (so the series being recorded when the
/// workout pauses or ends belongs to it). Samples from pauses are left out, and a sample that
/// arrives late (queued on the bus) still counts for the interval it was measured in. Duplicates
/// (a batch redelivered after a sink restart, a sample collected live and read back from the
/// store) are recognised by what they measured (``CollectedSample/key(of:)``) and counted once.
/// Heart-rate statistics come from the `heartRate` samples; heartbeat series are recognised by
/// id.
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
    /// How many samples ``dropSamples(endingBefore:)`` took off the front: ``samples`` holds
    /// the rest, and a sample's position in the whole workout is this plus its index. 0: the
    /// builder holds every sample collected (``isComplete``).
    public private(set) var droppedCount = 0
    /// The end date of the last sample dropped: a quantity sample ending at or before it is
    /// refused (it is the store's, read back when the workout needs every sample).
    public private(set) var droppedThrough: Date?
    private var seen: Set<SampleID> = []
    // Start and end of each collected series, so that a pause or the end can drop the series it
    // no longer overlaps.
    private var seriesSpans: [SampleID: (start: Date, end: Date)] = [:]
    private var selectionCache = IdentitySelection(nil)

    /// An empty builder.
    public init() {}

    /// Whether ``samples`` is every sample collected (nothing was dropped).
    public var isComplete: Bool { droppedCount == 0 }

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
        matches(record, session: session, selection: IdentitySelection(session.devices))
    }

    /// As ``matches(_:session:)``, with the session's devices parsed already.
    private static func matches(_ record: HealthRecord, session: WorkoutSession, selection: IdentitySelection) -> Bool {
        switch record {
        case .quantity(let sample):
            guard session.types.contains(sample.type), belongs(record, to: session, selection: selection) else { return false }
            return session.timeline.contains(sample.endDate)
        case .heartbeatSeries(let series):
            guard session.types.contains(.heartRate), belongs(record, to: session, selection: selection) else { return false }
            return session.timeline.overlaps(start: series.startDate, end: series.endDate)
        case .quantitySeries(let series):
            // Its quantities are taken one by one (``add(_:session:capacity:)``).
            return series.quantitySamples.contains { matches(.quantity($0), session: session, selection: selection) }
        case .workout, .correlation:
            return false
        }
    }

    /// Whether `record` is the session's reading. The gateway's own workout goes by device. A
    /// participant's (``WorkoutSession/participant``) goes by attribution (issue 65): a reading
    /// attributed to the participant is theirs from whichever device; one attributed to someone
    /// else is never theirs, even from their device (a strap handed over during the workout);
    /// one attributed to nobody is theirs when it comes from their devices (a sign-in's beats
    /// before the assignment, a store written before attribution).
    public static func belongs(_ record: HealthRecord, to session: WorkoutSession, selection: IdentitySelection) -> Bool {
        guard let participant = session.participant else { return selection.matches(record.device) }
        switch record.person {
        case participant?: return true
        case nil: return selection.matches(record.device)
        case _?: return false
        }
    }

    /// The session's devices, parsed once (a class offers every sample to every workout):
    /// made again when the session's list differs from the one it was made from.
    private mutating func selection(for session: WorkoutSession) -> IdentitySelection {
        if selectionCache.names != session.devices { selectionCache = IdentitySelection(session.devices) }
        return selectionCache
    }

    /// Adds `record` if ``wants(_:session:)``, it is new, and there is room (else it is counted
    /// in ``refusedCount``). Returns whether it was added.
    @discardableResult
    public mutating func add(_ record: HealthRecord, session: WorkoutSession, capacity: Int = LiveWorkoutBuilder.capacity) -> Bool {
        if case .quantitySeries(let series) = record {
            return series.quantitySamples.reduce(false) { added, sample in
                add(.quantity(sample), session: session, capacity: capacity) || added
            }
        }
        guard session.state == .running || session.state == .paused || session.state == .stopped,
              Self.matches(record, session: session, selection: selection(for: session))
        else { return false }
        return insert(record, capacity: capacity)
    }

    /// Adds `record` if it ``matches(_:session:)`` whatever the session's state, is new, and fits.
    @discardableResult
    mutating func addMatching(_ record: HealthRecord, session: WorkoutSession, capacity: Int = LiveWorkoutBuilder.capacity) -> Bool {
        if case .quantitySeries(let series) = record {
            return series.quantitySamples.reduce(false) { added, sample in
                addMatching(.quantity(sample), session: session, capacity: capacity) || added
            }
        }
        guard Self.matches(record, session: session, selection: selection(for: session)) else { return false }
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

    /// Takes the samples that end before `date` off the front of ``samples`` (their ids too,
    /// so the builder's memory stays bounded) and returns them, oldest first. Later, a quantity
    /// sample that ends at or before the last dropped one is refused. Heartbeat series stay.
    mutating func dropSamples(endingBefore date: Date) -> ArraySlice<CollectedSample> {
        let count = samples.firstIndex { $0.endDate >= date } ?? samples.count
        guard count > 0 else { return [] }
        let dropped = samples[..<count]
        for sample in dropped { seen.remove(sample.id) }
        droppedThrough = dropped.last?.endDate
        droppedCount += count
        samples.removeFirst(count)
        return dropped
    }

    /// The builder with every sample again, when some were dropped: a new builder that keeps
    /// everything, made of `records` (what the store committed, in any order) collected
    /// whatever the session's state, this builder's heartbeat series and its recent samples.
    /// Nil when nothing was dropped (collect `records` into this builder instead).
    func completed(with records: [HealthRecord], session: WorkoutSession) -> LiveWorkoutBuilder? {
        guard !isComplete else { return nil }
        var complete = LiveWorkoutBuilder()
        complete.refusedCount = refusedCount
        complete.heartbeatSeriesIDs = heartbeatSeriesIDs
        complete.seriesSpans = seriesSpans
        complete.seen = Set(heartbeatSeriesIDs)
        // In end-date order, so that each sample is appended; then the recent ones, most of
        // them among the store's already.
        func key(_ record: HealthRecord) -> (Date, SampleID) {
            if case .quantity(let sample) = record { return (sample.endDate, sample.id) }
            return (.distantFuture, record.id)
        }
        let selection = IdentitySelection(session.devices)
        let matching = records.filter { Self.matches($0, session: session, selection: selection) }
        for record in matching.sorted(by: { key($0) < key($1) }) { complete.addMatching(record, session: session) }
        for sample in samples { complete.insertCollected(sample) }
        return complete
    }

    private mutating func insertCollected(_ collected: CollectedSample) {
        guard seen.insert(collected.id).inserted else { return }
        // Usually appended at the end; a late sample is inserted in order.
        let index = samples.lastIndex { $0.endDate <= collected.endDate }.map { $0 + 1 } ?? 0
        if index < samples.count { reorderings += 1 }
        samples.insert(collected, at: index)
    }

    private mutating func insert(_ record: HealthRecord, capacity: Int) -> Bool {
        var key = record.id
        if case .quantity(let sample) = record {
            key = CollectedSample.key(of: sample)
            if let through = droppedThrough, sample.endDate <= through { return false }
        }
        guard !seen.contains(key) else { return false }
        guard seen.count < capacity else {
            refusedCount += 1
            return false
        }
        seen.insert(key)
        switch record {
        case .quantity(let sample):
            seen.remove(key)
            insertCollected(CollectedSample(
                id: key, type: sample.type, startDate: sample.startDate, endDate: sample.endDate,
                value: sample.canonicalValue))
        case .heartbeatSeries(let series):
            heartbeatSeriesIDs.append(series.id)
            seriesSpans[series.id] = (series.startDate, series.endDate)
        case .quantitySeries, .workout, .correlation:
            // A quantity series reaches here quantity by quantity (``add(_:session:capacity:)``).
            seen.remove(key)
            return false
        }
        return true
    }
}

public import FoundationEssentials

/// Turns RR intervals into heartbeat series chunks, gap-aware. Pure: dates come in with the
/// payloads, nothing reads a clock.
///
/// Beat times are accumulated from the RR values, not from arrival times, so the intervals
/// survive notification jitter. A segment (a connection, or a stretch of skin contact) is
/// anchored once: the last beat of its first notification is placed at the arrival date and the
/// earlier beats before it; the anchor beat is `precededByGap`. Every beat falls on the 1/1024 s
/// grid of its chunk's start (an anchor moves up onto it, by less than a millisecond). The series is re-anchored, with
/// a gap, when accumulated time drifts more than `+3 s`/`−10 s` from arrival dates (missed
/// notifications, or RR intervals adding up to more time than passed).
///
/// Beats never go back in time, within a chunk or across chunks, segments and connections (the
/// `notBefore` of a new builder is the previous one's ``lastBeat``): an anchor that would fall
/// at or before the last beat placed means the notification's oldest intervals cover time that
/// beats already cover (a strap repeating RR values, or RR intervals outrunning time); those
/// intervals are dropped and counted in ``overlappingBeats``, and the rest start after the last
/// beat with a gap mark. So a beat is never placed more than 3 s after the notification that
/// reported it. Chunks are cut every `maximumBeats` beats, and when a notification arrives in a
/// `maximumDuration`-long slot of the clock after the one the chunk started in (so a chunk spans
/// at most about `maximumDuration`, and every device's chunks end at the same instants: a
/// device's first chunk may be shorter); a continuing chunk starts at the previous chunk's last
/// beat, so no interval is lost.
public struct HeartbeatSeriesBuilder: Sendable {
    /// A finished chunk, ready to become a ``HeartbeatSeriesSample``.
    public struct Chunk: Hashable, Sendable {
        /// The series start date (the anchor, or the previous chunk's last beat).
        public var start: Date
        /// The last beat's date.
        public var end: Date
        /// Beats relative to `start`, non-decreasing.
        public var beats: [Heartbeat]
    }

    /// A chunk is cut once it holds this many beats.
    public let maximumBeats: Int
    /// …or once it spans this many seconds.
    public let maximumDuration: Double

    private var seriesStart: Date?
    /// The slot (see ``slot(of:)``) of the arrival that began the chunk being built: a chunk that
    /// continues another starts at that one's last beat, in the slot before.
    private var chunkSlot: Double?
    private var beats: [Heartbeat] = []
    /// The last beat placed by this builder, or `notBefore`: no later beat is placed before it.
    public private(set) var lastBeat: Date?
    private var gapPending = true
    /// RR intervals dropped because their beats would have fallen at or before a beat already
    /// placed.
    public private(set) var overlappingBeats = 0

    /// A builder; both limits are at least 1. No beat is placed at or before `notBefore` (the
    /// previous connection's ``lastBeat``).
    public init(maximumBeats: Int, maximumDuration: Double, notBefore: Date? = nil) {
        self.maximumBeats = max(1, maximumBeats)
        self.maximumDuration = max(1, maximumDuration)
        lastBeat = notBefore
    }

    /// The gateway's wall clock stepped by `seconds`: the dates held move with it, so the next
    /// notification's beats follow the last one on the new clock (no false gap, no beats dropped
    /// as overlapping after a step back), and the chunk being built is published on the new clock.
    public mutating func clockStepped(by seconds: Double) {
        seriesStart = seriesStart?.addingTimeInterval(seconds)
        lastBeat = lastBeat?.addingTimeInterval(seconds)
    }

    /// Beats waiting in the current chunk.
    public var pendingBeats: Int { beats.count }

    /// The chunk being built, as it stands: what ``finishSegment()`` would return now, without
    /// cutting it. Nil when it holds no beat.
    public var pendingChunk: Chunk? {
        guard let start = seriesStart, let last = lastBeat, !beats.isEmpty else { return nil }
        return Chunk(start: start, end: max(last, start), beats: beats)
    }

    /// Adds one notification's RR intervals (1/1024 s, oldest first), received at `date`.
    /// - Returns: the chunk this notification finished (one is due), or none.
    public mutating func add(rrIntervals: some Collection<UInt16>, receivedAt date: Date) -> [Chunk] {
        guard !rrIntervals.isEmpty else { return dueChunk(at: date).map { [$0] } ?? [] }
        var intervals = rrIntervals.map { Double($0) / 1024 }
        var total = intervals.reduce(0, +)
        if !gapPending, seriesStart != nil, let last = lastBeat {
            let predicted = last.addingTimeInterval(total)
            if predicted > date.addingTimeInterval(3) || predicted < date.addingTimeInterval(-10) {
                gapPending = true
            }
        }
        var beatDate: Date
        if gapPending || seriesStart == nil {
            var anchor = date.addingTimeInterval(-total)
            if let last = lastBeat {
                // The oldest intervals would end at or before a beat already placed: the time
                // they cover is covered.
                while !intervals.isEmpty, anchor <= last {
                    total -= intervals.removeFirst()
                    anchor = date.addingTimeInterval(-total)
                    overlappingBeats += 1
                }
                guard !intervals.isEmpty else { return dueChunk(at: date).map { [$0] } ?? [] }
            }
            if seriesStart == nil {
                seriesStart = anchor
                chunkSlot = slot(of: date)
            }
            append(anchor, gap: true)
            // Where the anchor was placed (on the grid), so that the intervals follow it.
            beatDate = lastBeat ?? anchor
            gapPending = false
        } else {
            // Just checked: lastBeat is non-nil in this branch.
            beatDate = lastBeat ?? date
        }
        for interval in intervals {
            beatDate = beatDate.addingTimeInterval(interval)
            append(beatDate, gap: false)
        }
        return dueChunk(at: date).map { [$0] } ?? []
    }

    /// Contact was lost (or beats were otherwise missed): the next beat is `precededByGap`.
    public mutating func markGap() {
        gapPending = true
    }

    /// Ends the segment (link lost, source stopping): returns what is pending and makes the next
    /// beat `precededByGap`.
    public mutating func finishSegment() -> Chunk? {
        let chunk = cut()
        gapPending = true
        seriesStart = nil
        chunkSlot = nil
        return chunk
    }

    private mutating func append(_ date: Date, gap: Bool) {
        let start = seriesStart ?? date
        // On the 1/1024 s grid of the series' start, the unit RR intervals count in: a beat that
        // follows one by its interval is on it already, and an anchor (a date estimated from an
        // arrival, known to tens of milliseconds) is moved up onto it, so that it still falls
        // after the last beat. The store keeps a series on the grid at about a byte a beat; one
        // anchor off it costs every later beat of the chunk nine.
        let ticks = (date.timeIntervalSince(start) * 1024).rounded(gap ? .up : .toNearestOrAwayFromZero)
        let offset = max(ticks / 1024, beats.last?.timeSinceSeriesStart ?? 0)
        beats.append(Heartbeat(timeSinceSeriesStart: offset, precededByGap: gap))
        lastBeat = start.addingTimeInterval(offset)
    }

    private mutating func dueChunk(at date: Date) -> Chunk? {
        guard let start = seriesStart, !beats.isEmpty else { return nil }
        let arrivalSlot = slot(of: date)
        guard beats.count >= maximumBeats || arrivalSlot > chunkSlot ?? slot(of: start) else { return nil }
        chunkSlot = arrivalSlot
        return cut()
    }

    /// The `maximumDuration`-long slot of the clock (seconds since 1970) `date` falls in: a chunk
    /// is cut when a notification arrives in a slot after its start's, so every device's chunks
    /// end together (the store rewrites their rows in one commit a slot, not one per device).
    private func slot(of date: Date) -> Double {
        (date.timeIntervalSince1970 / maximumDuration).rounded(.down)
    }

    private mutating func cut() -> Chunk? {
        guard let start = seriesStart, let last = lastBeat, !beats.isEmpty else { return nil }
        let chunk = Chunk(start: start, end: max(last, start), beats: beats)
        beats = []
        // The next chunk of the same segment starts at this chunk's last beat.
        seriesStart = last
        return chunk
    }
}

public import FoundationEssentials
public import HealthModel

/// Turns RR intervals into heartbeat series chunks, gap-aware. Pure: dates come in with the
/// payloads, nothing reads a clock.
///
/// Beat times are accumulated from the RR values, not from arrival times, so the intervals
/// survive notification jitter. A segment (a connection, or a stretch of skin contact) is
/// anchored once: the last beat of its first notification is placed at the arrival date and the
/// earlier beats before it; the anchor beat is `precededByGap`. The series is re-anchored, with
/// a gap, when accumulated time drifts more than `+3 s`/`−10 s` from arrival dates (missed
/// notifications, or RR intervals adding up to more time than passed). A re-anchor that falls
/// before the last beat placed (time ran ahead of the arrival dates) ends the chunk there and
/// starts a new one at the anchor: beats never go back in time within a chunk, and a beat is
/// never placed more than 3 s after the notification that reported it. Chunks are cut every
/// `maximumBeats` beats or `maximumDuration` seconds; a continuing chunk starts at the previous
/// chunk's last beat, so no interval is lost.
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
    private var beats: [Heartbeat] = []
    private var lastBeat: Date?
    private var gapPending = true

    /// A builder; both limits are at least 1.
    public init(maximumBeats: Int, maximumDuration: Double) {
        self.maximumBeats = max(1, maximumBeats)
        self.maximumDuration = max(1, maximumDuration)
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
    /// - Returns: the chunks finished by this notification, oldest first: none usually; one when
    ///   a chunk is due or a re-anchor ends one; two when both happen.
    public mutating func add(rrIntervals: some Collection<UInt16>, receivedAt date: Date) -> [Chunk] {
        guard !rrIntervals.isEmpty else { return dueChunk(at: date).map { [$0] } ?? [] }
        var finished: [Chunk] = []
        let total = rrIntervals.reduce(0.0) { $0 + Double($1) / 1024 }
        if !gapPending, let last = lastBeat {
            let predicted = last.addingTimeInterval(total)
            if predicted > date.addingTimeInterval(3) || predicted < date.addingTimeInterval(-10) {
                gapPending = true
            }
        }
        var beatDate: Date
        if gapPending || lastBeat == nil {
            let anchor = date.addingTimeInterval(-total)
            if let last = lastBeat, anchor < last {
                // The beats already placed run past this notification's: continuing from them
                // would push every later beat further into the future. The chunk ends at its
                // last beat, and a new one starts at the anchor.
                if let chunk = cut() { finished.append(chunk) }
                seriesStart = nil
                lastBeat = nil
            }
            if seriesStart == nil { seriesStart = anchor }
            append(anchor, gap: true)
            beatDate = anchor
            gapPending = false
        } else {
            // Just checked: lastBeat is non-nil in this branch.
            beatDate = lastBeat ?? date
            if seriesStart == nil { seriesStart = beatDate }
        }
        for interval in rrIntervals {
            beatDate = beatDate.addingTimeInterval(Double(interval) / 1024)
            append(beatDate, gap: false)
        }
        if let chunk = dueChunk(at: date) { finished.append(chunk) }
        return finished
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
        return chunk
    }

    private mutating func append(_ date: Date, gap: Bool) {
        let start = seriesStart ?? date
        let offset = max(date.timeIntervalSince(start), beats.last?.timeSinceSeriesStart ?? 0)
        beats.append(Heartbeat(timeSinceSeriesStart: offset, precededByGap: gap))
        lastBeat = start.addingTimeInterval(offset)
    }

    private mutating func dueChunk(at date: Date) -> Chunk? {
        guard let start = seriesStart, !beats.isEmpty else { return nil }
        guard beats.count >= maximumBeats || date.timeIntervalSince(start) >= maximumDuration else { return nil }
        return cut()
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

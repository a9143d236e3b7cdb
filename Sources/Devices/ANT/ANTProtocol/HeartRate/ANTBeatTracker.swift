/// Turns a strap's stream of pages into beats with exact RR intervals. Pure: one per strap.
///
/// A page repeats the last beat until the next one (a strap sends four messages a second,
/// beats come one to three a second), so a beat is new when the beat count changed. Its RR
/// interval (1/1024 s) is given only where it is exact: from page 4's previous beat time, or
/// from the last beat seen in this run when the count rose by exactly one. Both fields roll over (beat time
/// at 65 536, count at 256) and are subtracted modulo their width. A count that rose by more
/// than one means beats were missed: ``Beat/missedBeats`` says how many, and no interval is
/// invented across them. A page whose count did not change is not a beat, whatever its time.
public struct ANTBeatTracker: Hashable, Sendable {
    /// A new beat.
    public struct Beat: Hashable, Sendable {
        /// The beat's event time (1/1024 s, rolling over).
        public var beatTime: UInt16
        /// The beat count after it.
        public var beatCount: UInt8
        /// The interval from the previous beat, in 1/1024 s, when it is exact; nil otherwise.
        public var rrInterval: UInt16?
        /// Beats the strap counted between the previous beat seen and this one that were never
        /// seen (missed broadcasts); 0 when none were.
        public var missedBeats: Int
        /// The first beat since the tracker was made or reset: nothing is known before it.
        public var isFirst: Bool
    }

    /// A beat's identity on the air: its event time and the count after it.
    private struct Identity: Hashable, Sendable {
        var time: UInt16
        var count: UInt8
    }

    private var lastTime: UInt16?
    private var lastCount: UInt8 = 0
    /// The last beat seen before a ``reset()``, until a page carries another.
    private var beforeReset: Identity?

    /// A tracker that has seen nothing.
    public init() {}

    /// A tracker after a restart, `storedBeatTime` and `storedBeatCount` the last beat stored: a
    /// page repeating it is not a new beat, and nothing else is inferred from it. The next new
    /// beat is a first one, with an interval only from page 4: a count one above the stored beat's
    /// does not make the two consecutive to the series (the stored beat may have come without an
    /// interval, so the series never placed it, and the beats the last run received after it were
    /// not committed), so counting from it would place the next beat an interval after the wrong
    /// one.
    public init(storedBeatTime: UInt16, storedBeatCount: UInt8) {
        beforeReset = Identity(time: storedBeatTime, count: storedBeatCount)
    }

    /// Records one page's beat fields; returns the beat it carries when it is new. Pass
    /// `previousBeatTime` only from a trusted page 4.
    public mutating func observe(beatTime: UInt16, beatCount: UInt8, previousBeatTime: UInt16? = nil) -> Beat? {
        guard let last = lastTime else {
            if beforeReset == Identity(time: beatTime, count: beatCount) { return nil }
            beforeReset = nil
            lastTime = beatTime
            lastCount = beatCount
            return Beat(
                beatTime: beatTime, beatCount: beatCount, rrInterval: Self.interval(beatTime, previousBeatTime),
                missedBeats: 0, isFirst: true)
        }
        let delta = Int(beatCount &- lastCount)
        guard delta != 0 else { return nil }
        let rr = previousBeatTime.map { Self.interval(beatTime, $0) } ?? (delta == 1 ? Self.interval(beatTime, last) : nil)
        lastTime = beatTime
        lastCount = beatCount
        return Beat(beatTime: beatTime, beatCount: beatCount, rrInterval: rr, missedBeats: delta - 1, isFirst: false)
    }

    /// Forgets the counting (the strap was lost): the next new beat is a first one, with no
    /// interval or missed beats inferred across the loss. A page that still repeats the last
    /// beat seen is not new: the silence may have been the receiver's (a host too busy to read
    /// the stick for the loss timeout), and that beat is recorded already.
    public mutating func reset() {
        let last = lastTime.map { Identity(time: $0, count: lastCount) } ?? beforeReset
        self = Self()
        beforeReset = last
    }

    /// `time − previous` modulo 2¹⁶, nil when there is no previous time or they are equal (a zero
    /// interval is not a beat interval).
    private static func interval(_ time: UInt16, _ previous: UInt16?) -> UInt16? {
        guard let previous else { return nil }
        let interval = time &- previous
        return interval == 0 ? nil : interval
    }
}

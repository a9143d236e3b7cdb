/// Cuts the bytes read from the scale into lines, and keeps the offset of the bytes of complete
/// lines consumed: where a restart resumes (the checkpoint's `offset`).
///
/// Bounded: at most ``maxLineBytes`` of a line are kept. The rest of a longer line (noise, a
/// wrong baud rate, no newline ever) is dropped up to its newline and the line comes out
/// ``Line/truncated``, so that memory stays bounded whatever the port sends.
public struct LineSplitter: Sendable {
    /// One complete line.
    public struct Line: Sendable, Hashable {
        /// Its bytes without the `\n` (a CRLF's CR is still there), at most ``maxLineBytes``.
        public var bytes: [UInt8]
        /// The offset of its first byte.
        public var start: Int
        /// The offset just after its `\n`.
        public var end: Int
        /// True when the line was longer than ``maxLineBytes`` and ``bytes`` is its beginning.
        public var truncated: Bool

        /// A line of `bytes` from `start` to `end`.
        public init(bytes: [UInt8], start: Int, end: Int, truncated: Bool = false) {
            self.bytes = bytes
            self.start = start
            self.end = end
            self.truncated = truncated
        }
    }

    /// The longest line kept whole: a weighing is about 40 bytes.
    public let maxLineBytes: Int
    /// The offset just after the last complete line: every byte before it is consumed.
    public private(set) var consumed: Int
    /// The beginning of the line not yet ended by a `\n`.
    private var partial: [UInt8] = []
    /// The bytes of that line received, including those dropped beyond ``maxLineBytes``.
    private var partialCount: Int = 0

    /// A splitter whose first byte is at `offset` (where reading resumes).
    public init(offset: Int = 0, maxLineBytes: Int = 256) {
        consumed = offset
        self.maxLineBytes = maxLineBytes
    }

    /// Whether bytes of a line not yet ended by a `\n` were received.
    public var hasPartialLine: Bool { partialCount > 0 }

    /// The beginning of the line not yet ended (at most ``maxLineBytes``).
    public var partialLine: [UInt8] { partial }

    /// Takes `bytes`, the next ones read, and returns the lines they complete, in order.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [Line] {
        var lines: [Line] = []
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: ASCII.newline) {
            let piece = rest[..<newline]
            keep(piece)
            let length = partialCount + piece.count + 1
            let truncated = partialCount + piece.count > maxLineBytes
            lines.append(Line(bytes: partial, start: consumed, end: consumed + length, truncated: truncated))
            consumed += length
            partial.removeAll(keepingCapacity: true)
            partialCount = 0
            rest = rest[rest.index(after: newline)...]
        }
        keep(rest)
        partialCount += rest.count
        return lines
    }

    /// Starts again at `offset` with nothing pending: the file was truncated under the reader.
    public mutating func reset(offset: Int) {
        consumed = offset
        partial.removeAll()
        partialCount = 0
    }

    /// Keeps as much of `piece` as the bound leaves room for.
    private mutating func keep(_ piece: some Collection<UInt8>) {
        let room = maxLineBytes - partial.count
        if room > 0 { partial.append(contentsOf: piece.prefix(room)) }
    }
}

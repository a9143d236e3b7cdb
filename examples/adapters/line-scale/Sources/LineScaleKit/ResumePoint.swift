/// Where reading a regular file starts, given the checkpoint the gateway handed back: its
/// offset, unless the file no longer holds what the checkpoint counted.
public struct ResumePoint: Sendable, Hashable {
    /// The offset to start reading at.
    public var offset: Int
    /// Why the checkpoint's offset was not taken, for a warning; nil when it was (or there was none).
    public var problem: String?

    /// A resume point at `offset`, with the `problem` that put it there if any.
    public init(offset: Int, problem: String? = nil) {
        self.offset = offset
        self.problem = problem
    }

    /// The resume point for a file of `fileSize` bytes, given `checkpoint` (nil: none) and the
    /// byte just before the checkpoint's offset (`byteBeforeOffset`, read by the caller; nil
    /// when the offset is 0 or past the end).
    ///
    /// A checkpoint's offset always ends a line. A file shorter than it, or one whose byte before
    /// it is no newline, was truncated or rewritten: it is read again from its start, and the
    /// readings' ids keep what was already stored from being stored twice.
    public static func resuming(_ checkpoint: LineScaleCheckpoint?, fileSize: Int, byteBeforeOffset: UInt8?) -> ResumePoint {
        guard let offset = checkpoint?.offset, offset > 0 else { return ResumePoint(offset: 0) }
        guard offset <= fileSize else {
            return ResumePoint(
                offset: 0,
                problem: "the file has \(fileSize) bytes, fewer than the checkpoint's offset \(offset): it was truncated or replaced, so it is read from its start")
        }
        guard byteBeforeOffset == ASCII.newline else {
            return ResumePoint(
                offset: 0, problem: "the checkpoint's offset \(offset) does not end a line: the file was rewritten, so it is read from its start")
        }
        return ResumePoint(offset: offset)
    }
}

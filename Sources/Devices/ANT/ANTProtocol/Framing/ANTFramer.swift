/// Splits the byte stream of an ANT stick into ``ANTFrame``s. Pure: no I/O, no clock.
///
/// The same frames come out whatever the chunking of the input. A frame is accepted only when
/// its checksum matches; otherwise the framer drops one byte and looks for the next sync byte,
/// so it resynchronises after any garbage (a frame cut by an unplug, line noise, a sync byte
/// inside a payload) without ever losing a valid frame that follows. Skipped bytes are counted
/// in ``skippedBytes``; a run of them (an *episode*) is reported once, as
/// ``Output/resynchronised(skippedBytes:)`` just before the first good frame after it. A false
/// sync byte whose length byte announces a long frame delays the frames after it until that many
/// bytes have arrived (at most ``ANTFrame/maximumPayloadLength`` + 4: a few broadcasts); none is
/// lost. Never
/// holds more than one maximal frame (`ANTFrame.maximumPayloadLength + 4` bytes) of input.
public struct ANTFramer: Sendable {
    /// What ``append(_:)`` returns, in stream order.
    public enum Output: Hashable, Sendable {
        /// A frame whose checksum matched.
        case frame(ANTFrame)
        /// The framer skipped `skippedBytes` bytes before the frame that follows: one episode.
        case resynchronised(skippedBytes: Int)
    }

    private var buffer: [UInt8] = []
    /// Bytes skipped in the episode that is still open (no good frame since).
    public private(set) var pendingSkippedBytes = 0
    /// Every byte skipped since the framer was made.
    public private(set) var skippedBytes = 0
    /// Episodes reported since the framer was made.
    public private(set) var episodes = 0

    /// A framer with nothing buffered.
    public init() {
        buffer.reserveCapacity(ANTFrame.maximumPayloadLength + 4)
    }

    /// Appends `bytes` and returns the frames (and resynchronisations) they complete, in order.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [Output] {
        var outputs: [Output] = []
        for byte in bytes {
            buffer.append(byte)
            drain(into: &outputs)
        }
        return outputs
    }

    /// Forgets a partial frame (the device went away): its bytes count as skipped.
    public mutating func reset() {
        skip(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func drain(into outputs: inout [Output]) {
        // Each pass either waits for more bytes, takes a frame, or drops the first byte and
        // rescans what is left (bytes after a false sync may hold the real one).
        while let first = buffer.first {
            guard first == ANTFrame.sync else {
                dropFirst()
                continue
            }
            guard buffer.count >= 2 else { return }
            let length = Int(buffer[1])
            guard length <= ANTFrame.maximumPayloadLength else {
                dropFirst()
                continue
            }
            let total = length + 4
            guard buffer.count >= total else { return }
            guard ANTFrame.checksum(buffer[0..<(total - 1)]) == buffer[total - 1] else {
                dropFirst()
                continue
            }
            if pendingSkippedBytes > 0 {
                outputs.append(.resynchronised(skippedBytes: pendingSkippedBytes))
                episodes += 1
                pendingSkippedBytes = 0
            }
            outputs.append(.frame(ANTFrame(id: buffer[2], payload: Array(buffer[3..<(total - 1)]))))
            buffer.removeFirst(total)
        }
    }

    private mutating func dropFirst() {
        buffer.removeFirst()
        skip(1)
    }

    private mutating func skip(_ count: Int) {
        pendingSkippedBytes += count
        skippedBytes += count
    }
}

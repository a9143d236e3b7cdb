/// Frames text lines ended by LF; a CR before the LF is removed. Empty lines are skipped.
///
/// A line longer than `maximumLength` (without its terminator) is reported once as
/// ``FramingError/overlong(length:maximum:)`` and the rest of it, up to the next LF, is
/// discarded: the framer never holds more than `maximumLength` bytes.
public struct LineFramer: ByteFramer {
    /// The longest accepted line, in bytes, without the terminator.
    public let maximumLength: Int
    private var buffer: [UInt8] = []
    private var discarding = false
    private var discarded = 0

    /// Creates a framer; `maximumLength` must be at least 1.
    public init(maximumLength: Int = 256) {
        self.maximumLength = max(1, maximumLength)
        buffer.reserveCapacity(self.maximumLength)
    }

    public mutating func append(_ bytes: some Collection<UInt8>) -> [Result<[UInt8], FramingError>] {
        var frames: [Result<[UInt8], FramingError>] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                    discarded = 0
                } else {
                    if buffer.last == UInt8(ascii: "\r") { buffer.removeLast() }
                    if !buffer.isEmpty { frames.append(.success(buffer)) }
                }
                buffer.removeAll(keepingCapacity: true)
                continue
            }
            if discarding {
                discarded += 1
                continue
            }
            // One extra byte is allowed for a CR that the LF will remove.
            if buffer.count == maximumLength && byte != UInt8(ascii: "\r")
                || buffer.count > maximumLength
            {
                frames.append(.failure(.overlong(length: buffer.count + 1, maximum: maximumLength)))
                buffer.removeAll(keepingCapacity: true)
                discarding = true
                continue
            }
            buffer.append(byte)
        }
        return frames
    }
}

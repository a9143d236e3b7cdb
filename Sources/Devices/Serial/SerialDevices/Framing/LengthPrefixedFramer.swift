/// Frames binary messages laid out as `SYNC LEN payload[LEN]`: a sync byte, a one-byte payload
/// length, then the payload (the shape of many small binary sensor protocols).
///
/// Bytes before a sync byte are skipped and counted as one ``FramingError/badLength(_:)`` per
/// resynchronisation only when a length is impossible (zero or above `maximumLength`). A
/// protocol with a checksum checks it in its decoder. Never holds more than `maximumLength + 2`
/// bytes.
public struct LengthPrefixedFramer: ByteFramer {
    /// The byte that starts every frame.
    public let sync: UInt8
    /// The longest payload accepted, at most 255.
    public let maximumLength: Int
    private var buffer: [UInt8] = []

    /// Creates a framer.
    public init(sync: UInt8 = 0xA5, maximumLength: Int = 255) {
        self.sync = sync
        self.maximumLength = min(255, max(1, maximumLength))
    }

    public mutating func append(_ bytes: some Collection<UInt8>) -> [Result<[UInt8], FramingError>] {
        var frames: [Result<[UInt8], FramingError>] = []
        for byte in bytes {
            if buffer.isEmpty {
                if byte == sync { buffer.append(byte) }
                continue
            }
            if buffer.count == 1 {
                let length = Int(byte)
                guard length > 0, length <= maximumLength else {
                    frames.append(.failure(.badLength(length)))
                    buffer.removeAll(keepingCapacity: true)
                    if byte == sync { buffer.append(byte) }
                    continue
                }
            }
            buffer.append(byte)
            if buffer.count == Int(buffer[1]) + 2 {
                frames.append(.success(Array(buffer[2...])))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        return frames
    }
}

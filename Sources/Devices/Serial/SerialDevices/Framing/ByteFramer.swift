/// Splits a byte stream into frames. Pure: no I/O, no clock.
///
/// A framer keeps the bytes of an incomplete frame between calls, so the same frames come out
/// whatever the chunking of the input (tests feed every chunking from byte by byte to all at
/// once). Its buffer is bounded by its maximum frame length.
public protocol ByteFramer: Sendable {
    /// Appends `bytes` and returns every frame completed by them, in order, with a
    /// ``FramingError`` in place of each frame that had to be discarded.
    mutating func append(_ bytes: some Collection<UInt8>) -> [Result<[UInt8], FramingError>]
}

/// A frame the framer discarded.
public enum FramingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// More than the maximum frame length arrived without a terminator; the bytes up to the next
    /// terminator were dropped. `length` is how many bytes were seen before giving up.
    case overlong(length: Int, maximum: Int)
    /// A length prefix announced an impossible frame; the framer resynchronised.
    case badLength(Int)

    public var description: String {
        switch self {
        case .overlong(let length, let maximum): "frame longer than \(maximum) bytes (\(length)+ bytes dropped)"
        case .badLength(let length): "impossible frame length \(length)"
        }
    }
}

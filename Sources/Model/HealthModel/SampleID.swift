public import FoundationEssentials
import Synchronization

/// A time-ordered sample identifier: a UUID version 7 (RFC 9562 §5.7), kept as 16 bytes.
///
/// UUIDv7 puts a 48-bit Unix millisecond timestamp in the most significant bits, so identifiers
/// created later sort later. SQLite's B-tree then appends instead of splitting random pages.
/// Ordering (`<`) is the byte order, which is the creation order for UUIDv7.
public struct SampleID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The most significant 8 bytes, big-endian.
    public let high: UInt64
    /// The least significant 8 bytes, big-endian.
    public let low: UInt64

    /// Creates an identifier from its two big-endian halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates an identifier from any Foundation `UUID` (any version).
    public init(_ uuid: UUID) {
        let t = uuid.uuid
        high = [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7].reduce(0) { $0 << 8 | UInt64($1) }
        low = [t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Parses the canonical 8-4-4-4-12 hexadecimal form, in either case. Returns nil otherwise.
    public init?(string: String) {
        var digits: [UInt8] = []
        digits.reserveCapacity(32)
        let utf8 = Array(string.utf8)
        guard utf8.count == 36 else { return nil }
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = Self.hexValue(byte) else { return nil }
            digits.append(value)
        }
        high = digits[0..<16].reduce(0) { $0 << 4 | UInt64($1) }
        low = digits[16..<32].reduce(0) { $0 << 4 | UInt64($1) }
    }

    /// Creates an identifier from exactly 16 bytes; nil for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let array = Array(bytes)
        high = array[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = array[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The 16 bytes in network order, as stored in SQLite BLOB columns.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The identifier as a Foundation `UUID`.
    public var uuid: UUID {
        let b = bytes
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// The canonical lower-case 8-4-4-4-12 form, written byte by byte without Foundation's
    /// `UUID.uuidString` and its intermediate strings.
    public var uuidString: String { uuidString(after: "") }

    /// `prefix` followed by the canonical form, written into one string: a name made of an
    /// identifier (a store's sync identifier for each record it reads) allocates once, where
    /// `prefix + uuidString` allocates twice.
    public func uuidString(after prefix: String) -> String {
        var prefix = prefix
        let lead = prefix.utf8.count
        return String(unsafeUninitializedCapacity: lead + 36) { buffer in
            prefix.withUTF8 { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer($0)) }
            // Two digits a byte, by arithmetic (a table in an array literal was allocated per
            // call); 8-4-4-4-12: a dash before bytes 4, 6, 8 and 10.
            var out = lead
            func write(_ word: UInt64, bytes range: Range<Int>) {
                for index in range {
                    let byte = UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * (index % 8)))
                    let (high, low) = (byte >> 4, byte & 0xF)
                    buffer[out] = high < 10 ? UInt8(ascii: "0") &+ high : UInt8(ascii: "a") &+ (high &- 10)
                    buffer[out + 1] = low < 10 ? UInt8(ascii: "0") &+ low : UInt8(ascii: "a") &+ (low &- 10)
                    out += 2
                }
            }
            func dash() {
                buffer[out] = UInt8(ascii: "-")
                out += 1
            }
            write(high, bytes: 0..<4)
            dash()
            write(high, bytes: 4..<6)
            dash()
            write(high, bytes: 6..<8)
            dash()
            write(low, bytes: 8..<10)
            dash()
            write(low, bytes: 10..<16)
            return out
        }
    }

    /// The UUID version nibble (7 for identifiers made by ``SampleIDGenerator``).
    public var version: Int { Int((high >> 12) & 0xF) }

    /// For a version 7 identifier, the Unix time in milliseconds it was created at.
    public var unixMilliseconds: UInt64 { high >> 16 }

    public var description: String { uuidString }

    public static func < (lhs: SampleID, rhs: SampleID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension SampleID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = SampleID(string: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a UUID: \(text)")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuidString)
    }
}

/// Makes monotonic UUIDv7 identifiers without touching /dev/urandom on every call.
///
/// RFC 9562 §6.2 method 1: the 12-bit `rand_a` field is a counter that increments within one
/// millisecond, so identifiers made by one generator are strictly increasing even at more than
/// 4096 per millisecond (the timestamp then runs a little ahead of the clock, as the RFC allows).
/// The 62 random bits come from a xoshiro256** stream seeded once from the system generator.
///
/// Thread-safe: state lives in a `Mutex`. Inject one generator per gateway; tests pass a seed and a
/// clock to get reproducible identifiers.
public final class SampleIDGenerator: Sendable {
    private struct State {
        var lastMilliseconds: UInt64 = 0
        var counter: UInt64 = 0
        var random: Xoshiro256
    }

    private let state: Mutex<State>
    private let milliseconds: @Sendable () -> UInt64

    /// Creates a generator.
    /// - Parameters:
    ///   - seed: a fixed seed for reproducible tests; nil seeds from the system generator.
    ///   - milliseconds: the Unix time in milliseconds; defaults to the wall clock.
    public init(
        seed: UInt64? = nil,
        milliseconds: @escaping @Sendable () -> UInt64 = {
            UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        }
    ) {
        var system = SystemRandomNumberGenerator()
        self.state = Mutex(State(random: Xoshiro256(seed: seed ?? system.next())))
        self.milliseconds = milliseconds
    }

    /// Returns the next identifier; strictly greater than every earlier one from this generator.
    public func next() -> SampleID {
        let now = milliseconds()
        return state.withLock { state in
            if now > state.lastMilliseconds {
                state.lastMilliseconds = now
                state.counter = state.random.next() & 0x3FF  // random start, room to count up
            } else {
                state.counter += 1
                if state.counter > 0xFFF {
                    state.lastMilliseconds += 1
                    state.counter = 0
                }
            }
            let high = (state.lastMilliseconds & 0xFFFF_FFFF_FFFF) << 16 | 0x7000 | state.counter
            let low = (state.random.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
            return SampleID(high: high, low: low)
        }
    }
}

/// xoshiro256** (Blackman and Vigna, 2018): fast, not cryptographic; only used for the random
/// tail of identifiers, whose uniqueness the timestamp and counter already carry.
struct Xoshiro256: RandomNumberGenerator, Sendable {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    init(seed: UInt64) {
        // splitmix64 expands one word into four, as the authors recommend.
        var x = seed
        func splitmix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s = (splitmix(), splitmix(), splitmix(), splitmix())
    }

    mutating func next() -> UInt64 {
        let result = ((s.1 &* 5) << 7 | (s.1 &* 5) >> 57) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = s.3 << 45 | s.3 >> 19
        return result
    }
}

public import FoundationEssentials

/// What turns an instant into local time: the offset from UTC in effect at that instant.
/// `TimeZone` has it; so has ``ZoneRules``, a zone of the tz database read without ICU.
public protocol UTCOffsetRules: Sendable {
    /// The offset from UTC, in seconds east of Greenwich, in effect at `date`.
    func secondsFromGMT(for date: Date) -> Int
}

extension TimeZone: UTCOffsetRules {}

/// A time zone's rules read from a TZif file of the tz database (RFC 8536): the offset from UTC
/// at every transition, and the POSIX TZ rule of its footer for the instants after the last one.
///
/// FoundationEssentials knows only fixed offsets; named zones would otherwise need
/// FoundationInternationalization and ICU's copy of the database. The system's copy
/// (/usr/share/zoneinfo, Debian's `tzdata`) is the one `date`, systemd and libc use.
public struct ZoneRules: UTCOffsetRules, Hashable {
    /// The zone's name in the tz database ("Europe/Berlin").
    public let identifier: String
    /// The transitions, in seconds since 1970 UTC, ascending.
    let transitions: [Int64]
    /// The offset in effect from each transition on.
    let offsets: [Int32]
    /// The offset before the first transition.
    let initialOffset: Int32
    /// The rule after the last transition, when the file has one.
    let rule: PosixTimeZoneRule?

    /// UTC, for hosts without the tz database.
    public static let utc = ZoneRules(identifier: "UTC", transitions: [], offsets: [], initialOffset: 0, rule: nil)

    init(identifier: String, transitions: [Int64], offsets: [Int32], initialOffset: Int32, rule: PosixTimeZoneRule?) {
        self.identifier = identifier
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.rule = rule
    }

    /// Parses a TZif file (version 1, 2, 3 or 4).
    /// - Throws: ``ZoneRulesError`` naming what is wrong with the bytes.
    public init(identifier: String, tzif bytes: [UInt8]) throws(ZoneRulesError) {
        var reader = TZifReader(bytes: bytes)
        let first = try reader.header()
        var block = try reader.block(first, timeSize: 4)
        var rule: PosixTimeZoneRule?
        if first.version >= 2 {
            // The 64-bit block follows the 32-bit one, then the footer "\n<TZ string>\n".
            let second = try reader.header()
            block = try reader.block(second, timeSize: 8)
            let footer = try reader.footer()
            if !footer.isEmpty {
                guard let parsed = PosixTimeZoneRule(footer) else {
                    throw ZoneRulesError(reason: "footer \"\(footer)\" is not a POSIX TZ rule")
                }
                rule = parsed
            }
        }
        self.init(
            identifier: identifier, transitions: block.transitions, offsets: block.offsets,
            initialOffset: block.initialOffset, rule: rule)
    }

    public func secondsFromGMT(for date: Date) -> Int {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        guard let last = transitions.last, seconds >= last else {
            // The last transition at or before the instant.
            var low = 0, high = transitions.count
            while low < high {
                let middle = (low + high) / 2
                if transitions[middle] <= seconds { low = middle + 1 } else { high = middle }
            }
            return Int(low == 0 ? initialOffset : offsets[low - 1])
        }
        if let rule { return rule.offset(at: seconds) }
        return Int(offsets[offsets.count - 1])
    }
}

/// A TZif file could not be read.
public struct ZoneRulesError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var description: String { "not a valid TZif file: \(reason)" }
}

/// Reads the parts of a TZif file in order.
private struct TZifReader {
    struct Header {
        var version: Int
        var isUTCCount, isStandardCount, leapCount, timeCount, typeCount, characterCount: Int
    }

    struct Block {
        var transitions: [Int64]
        var offsets: [Int32]
        var initialOffset: Int32
    }

    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func take(_ count: Int) throws(ZoneRulesError) -> ArraySlice<UInt8> {
        guard count >= 0, position + count <= bytes.count else {
            throw ZoneRulesError(reason: "truncated at byte \(position)")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func integer(_ size: Int) throws(ZoneRulesError) -> Int64 {
        let field = try take(size)
        var value: UInt64 = 0
        for byte in field { value = value << 8 | UInt64(byte) }
        // Two's complement of `size` bytes.
        let shift = UInt64(64 - 8 * size)
        return Int64(bitPattern: value << shift) >> Int64(shift)
    }

    mutating func header() throws(ZoneRulesError) -> Header {
        guard Array(try take(4)) == Array("TZif".utf8) else { throw ZoneRulesError(reason: "no TZif magic") }
        let versionByte = try take(1).first ?? 0
        let version = versionByte == 0 ? 1 : Int(versionByte) - Int(UInt8(ascii: "0"))
        guard (1...9).contains(version) else { throw ZoneRulesError(reason: "unknown version byte \(versionByte)") }
        _ = try take(15)
        var counts: [Int] = []
        for _ in 0..<6 {
            let count = try integer(4)
            guard (0...1_000_000).contains(count) else { throw ZoneRulesError(reason: "count \(count) out of range") }
            counts.append(Int(count))
        }
        guard counts[4] >= 1 else { throw ZoneRulesError(reason: "no local time type") }
        return Header(
            version: version, isUTCCount: counts[0], isStandardCount: counts[1], leapCount: counts[2],
            timeCount: counts[3], typeCount: counts[4], characterCount: counts[5])
    }

    mutating func block(_ header: Header, timeSize: Int) throws(ZoneRulesError) -> Block {
        var times: [Int64] = []
        for _ in 0..<header.timeCount { times.append(try integer(timeSize)) }
        let indices = Array(try take(header.timeCount))
        var typeOffsets: [Int32] = []
        for _ in 0..<header.typeCount {
            let offset = try integer(4)
            _ = try take(2)  // isdst, designation index
            guard (-26 * 3600...26 * 3600).contains(offset) else {
                throw ZoneRulesError(reason: "offset \(offset) s out of range")
            }
            typeOffsets.append(Int32(offset))
        }
        _ = try take(header.characterCount + header.leapCount * (timeSize + 4) + header.isStandardCount + header.isUTCCount)
        var offsets: [Int32] = []
        for index in indices {
            guard Int(index) < typeOffsets.count else { throw ZoneRulesError(reason: "type index \(index) out of range") }
            offsets.append(typeOffsets[Int(index)])
        }
        guard zip(times, times.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw ZoneRulesError(reason: "transitions out of order")
        }
        return Block(transitions: times, offsets: offsets, initialOffset: typeOffsets[0])
    }

    mutating func footer() throws(ZoneRulesError) -> String {
        guard position < bytes.count else { return "" }
        guard bytes[position] == UInt8(ascii: "\n") else { throw ZoneRulesError(reason: "no footer after the data") }
        let rest = bytes[(position + 1)...]
        guard let end = rest.firstIndex(of: UInt8(ascii: "\n")) else { throw ZoneRulesError(reason: "unterminated footer") }
        position = end + 1
        return String(decoding: rest[..<end], as: UTF8.self)
    }
}

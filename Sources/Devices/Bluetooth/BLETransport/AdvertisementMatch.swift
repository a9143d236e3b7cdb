/// What an advertisement profile listens for: any of its matches selects an advertisement.
public enum AdvertisementMatch: Sendable, Hashable {
    /// Manufacturer-specific data of this company (`0x006B`, Polar).
    case manufacturer(UInt16)
    /// Service data of this service (`0x181D`, a Xiaomi scale).
    case serviceData(BluetoothUUID)
    /// A local name matching this shell glob (`Polar *`).
    case name(String)

    /// Whether `advertisement` carries what this match asks for.
    public func matches(_ advertisement: Advertisement) -> Bool {
        switch self {
        case .manufacturer(let company): advertisement.manufacturerData[company] != nil
        case .serviceData(let uuid): advertisement.serviceData[uuid] != nil
        case .name(let pattern): advertisement.name.map { Glob.matches(pattern, $0) } ?? false
        }
    }

    /// The advertising data patterns that select what this match asks for, as BlueZ's
    /// Advertisement Monitor takes them (`or_patterns`; BlueZ doc/org.bluez.AdvertisementMonitor.rst):
    /// manufacturer data (AD type 0xFF) starting with the company id, little-endian; service data
    /// starting with the UUID (0x16 for a 16-bit UUID, 0x21 for a 128-bit one, little-endian);
    /// a name glob's literal prefix in the complete (0x09) or shortened (0x08) local name. Nil
    /// when no pattern can say it: a glob that starts with a wildcard, or a prefix longer than
    /// an advertisement's data (Core Specification Supplement, Part A, §1; Vol 3, Part C, §11).
    public var dataPatterns: [AdvertisingDataPattern]? {
        switch self {
        case .manufacturer(let company):
            return [AdvertisingDataPattern(type: 0xFF, content: [UInt8(company & 0xFF), UInt8(company >> 8)])]
        case .serviceData(let uuid):
            if let short = uuid.shortValue {
                return [AdvertisingDataPattern(type: 0x16, content: [UInt8(short & 0xFF), UInt8(short >> 8)])]
            }
            let hex = Array(uuid.uuidString.filter { $0 != "-" })
            var bytes: [UInt8] = []
            for index in stride(from: 0, to: hex.count - 1, by: 2) {
                guard let byte = UInt8(String(hex[index...index + 1]), radix: 16) else { return nil }
                bytes.append(byte)
            }
            guard bytes.count == 16 else { return nil }
            return [AdvertisingDataPattern(type: 0x21, content: bytes.reversed())]
        case .name(let pattern):
            let prefix = Array(pattern.prefix { $0 != "*" && $0 != "?" }.utf8)
            guard !prefix.isEmpty, prefix.count <= AdvertisingDataPattern.maximumLength else { return nil }
            return [AdvertisingDataPattern(type: 0x09, content: prefix), AdvertisingDataPattern(type: 0x08, content: prefix)]
        }
    }
}

/// One advertising data pattern: an AD structure of `type` whose data holds `content` at
/// `start` (BlueZ's `(yyay)` in AdvertisementMonitor1.Patterns).
public struct AdvertisingDataPattern: Sendable, Hashable {
    /// The most data an AD structure of a legacy advertisement carries (31 octets less its length
    /// and type): a longer pattern could never match (BlueZ itself refuses beyond 31,
    /// BT_AD_MAX_DATA_LEN).
    public static let maximumLength = 29
    /// Where in the AD structure's data the content starts.
    public var start: UInt8
    /// The AD type (0xFF manufacturer data, 0x16 16-bit service data, …).
    public var type: UInt8
    /// The octets to find there.
    public var content: [UInt8]

    /// A pattern for `content` at `start` of AD structures of `type`.
    public init(start: UInt8 = 0, type: UInt8, content: [UInt8]) {
        self.start = start
        self.type = type
        self.content = content
    }
}

/// Shell globs over names: `*` any run, `?` one character, case-sensitive.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern), t = Array(text)
        var (pi, ti) = (0, 0)
        var star: Int?
        var mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] == "?" || p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                mark = ti
                pi += 1
            } else if let s = star {
                pi = s + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

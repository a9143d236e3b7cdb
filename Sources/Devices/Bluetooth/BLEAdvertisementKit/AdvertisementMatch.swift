public import BLETransport

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

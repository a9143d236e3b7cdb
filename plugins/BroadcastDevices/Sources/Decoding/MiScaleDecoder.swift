/// Which Xiaomi scale sent a weighing, by the 16-bit UUID of its service data.
public enum MiScaleService: UInt16, Sendable, CaseIterable {
    /// Mi Smart Scale 2 (XMTZC04HM): Weight Scale service data, 0x181D, 10 bytes.
    case weightScale = 0x181D
    /// Mi Body Composition Scale 2 (XMTZC05HM): Body Composition service data, 0x181B, 13 bytes.
    case bodyComposition = 0x181B

    /// The service data's fixed length in bytes.
    public var payloadLength: Int { self == .weightScale ? 10 : 13 }

    /// `181d` or `181b`, as `healthgate decode mi-scale --service` takes it.
    public var hexName: String { self == .weightScale ? "181d" : "181b" }
}

/// The unit a Xiaomi scale displays, from its flags.
public enum MiScaleUnit: String, Sendable, CaseIterable {
    case kilogram = "kg"
    case pound = "lb"
    /// The Chinese catty (市斤), 0.5 kg.
    case jin = "jin"
}

/// The scale's clock as it broadcasts it: local time without a zone, set by the phone app.
public struct MiScaleClock: Sendable, Hashable {
    /// The year (1970 while the clock is unset).
    public let year: Int
    /// 1–12.
    public let month: Int
    /// 1–31.
    public let day: Int
    /// 0–23.
    public let hour: Int
    /// 0–59.
    public let minute: Int
    /// 0–59.
    public let second: Int

    /// The earliest year taken as a set clock. A scale whose clock was never set by its app counts
    /// from 1970-01-01 (the published vectors of xiaomi-ble show such years), so a year before
    /// this is an unset clock.
    public static let firstSetYear = 2000

    /// `2021-04-11T16:19:01` (ISO 8601 local time, no zone: the scale knows none), or nil while
    /// the clock is unset (a year before ``firstSetYear``) or the fields are not a date.
    public var iso8601: String? {
        guard year >= Self.firstSetYear, (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))"
    }
}

/// One advertisement of a Xiaomi scale, decoded.
public struct MiScaleReading: Sendable, Equatable {
    /// The scale model, by its service data.
    public let service: MiScaleService
    /// The weight as the scale sends it, in its own unit's steps (kg × 200, lb × 100, jin × 100).
    public let rawWeight: UInt16
    /// The unit the scale displays.
    public let unit: MiScaleUnit
    /// The weight in kilograms whatever the scale displays, rounded to the gram.
    public let weightKilograms: Double
    /// The stabilised flag: the weighing is final.
    public let stabilized: Bool
    /// The load-removed flag: the person has stepped off (the scale repeats the last weighing).
    public let loadRemoved: Bool
    /// The impedance in ohms (body composition scale, when its flag is set); nil otherwise.
    public let impedance: Int?
    /// The scale's clock at the weighing.
    public let clock: MiScaleClock
}

/// Decodes the service data Xiaomi's scales broadcast (the bytes after the 16-bit UUID), by the
/// layouts Home Assistant's `xiaomi-ble` parser reads (`_parse_scale_v1`, `_parse_scale_v2`) and
/// openScale's Mi Scale drivers describe:
///
/// - 0x181D (Mi Smart Scale 2), 10 bytes: control byte (bit 0 lb, bit 4 jin, bit 5 stabilised,
///   bit 7 load removed), weight (uint16 LE), year (uint16 LE), month, day, hour, minute, second;
/// - 0x181B (Mi Body Composition Scale 2), 13 bytes: two control bytes (byte 0 bit 0 lb; byte 1:
///   bit 1 impedance present, bit 5 stabilised, bit 6 jin, bit 7 load removed), year (uint16
///   LE), month, day, hour, minute, second, impedance (uint16 LE, ohms), weight (uint16 LE).
///
/// The weight is kg × 200 when neither unit flag is set, else lb × 100 or jin × 100.
/// Pure. Throws ``AdvertisementDecodingError``: `truncated` for fewer bytes than the layout,
/// `unexpectedLength` for more.
public enum MiScaleDecoder {
    /// Decodes `bytes`, the service data of `service` after its UUID.
    public static func decode(
        _ bytes: [UInt8], service: MiScaleService
    ) throws(AdvertisementDecodingError) -> MiScaleReading {
        let name = "Xiaomi scale service data (0x\(service.hexName.uppercased()))"
        guard bytes.count >= service.payloadLength else {
            throw AdvertisementDecodingError(
                payload: name, code: .truncated, offset: bytes.count,
                reason: "truncated: \(bytes.count) bytes, the layout has \(service.payloadLength)")
        }
        guard bytes.count == service.payloadLength else {
            throw AdvertisementDecodingError(
                payload: name, code: .unexpectedLength, offset: service.payloadLength,
                reason: "\(bytes.count) bytes, the layout has \(service.payloadLength)")
        }
        func uint16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        func clock(at: Int) -> MiScaleClock {
            MiScaleClock(
                year: Int(uint16(at)), month: Int(bytes[at + 2]), day: Int(bytes[at + 3]), hour: Int(bytes[at + 4]),
                minute: Int(bytes[at + 5]), second: Int(bytes[at + 6]))
        }
        let pound: Bool, jin: Bool, stabilized: Bool, removed: Bool
        let raw: UInt16
        var impedance: Int?
        let time: MiScaleClock
        switch service {
        case .weightScale:
            let control = bytes[0]
            (pound, jin, stabilized, removed) = (control & 0x01 != 0, control & 0x10 != 0, control & 0x20 != 0, control & 0x80 != 0)
            raw = uint16(1)
            time = clock(at: 3)
        case .bodyComposition:
            let control = bytes[1]
            (pound, jin, stabilized, removed) = (bytes[0] & 0x01 != 0, control & 0x40 != 0, control & 0x20 != 0, control & 0x80 != 0)
            if control & 0x02 != 0 { impedance = Int(uint16(9)) }
            raw = uint16(11)
            time = clock(at: 2)
        }
        // xiaomi-ble lets the pound flag win when both unit flags are set.
        let unit: MiScaleUnit = pound ? .pound : jin ? .jin : .kilogram
        let kilograms: Double
        switch unit {
        case .kilogram: kilograms = Double(raw) / 200
        case .pound: kilograms = Double(raw) / 100 * 0.45359237  // the international pound, exactly
        case .jin: kilograms = Double(raw) / 100 * 0.5
        }
        return MiScaleReading(
            service: service, rawWeight: raw, unit: unit, weightKilograms: (kilograms * 1000).rounded() / 1000,
            stabilized: stabilized, loadRemoved: removed, impedance: impedance, clock: time)
    }
}

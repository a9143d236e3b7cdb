/// Where a heart-rate sensor is worn. The raw values are the Body Sensor Location (0x2A38)
/// codes of the Bluetooth Heart Rate Service, which are also HealthKit's.
public enum HeartRateSensorLocation: Int, Hashable, Sendable, Codable, CaseIterable {
    case other = 0, chest, wrist, finger, hand, earLobe, foot

    /// The name used in JSON and the CLI.
    public var name: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "earLobe"
        case .foot: "foot"
        }
    }

    /// The location with this name, or nil.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

/// The activity during a heart-rate reading (HKHeartRateMotionContext).
public enum HeartRateMotionContext: Int, Hashable, Sendable, Codable, CaseIterable {
    case notSet = 0, sedentary, active

    /// The name used in JSON and the CLI.
    public var name: String {
        switch self {
        case .notSet: "notSet"
        case .sedentary: "sedentary"
        case .active: "active"
        }
    }

    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

/// A metadata key. The built-in keys have typed accessors on ``Metadata``; any other string is a
/// custom key, conventionally namespaced (`healthgate.battery`).
public struct MetadataKey: RawRepresentable, Hashable, Sendable, Codable, Comparable,
    ExpressibleByStringLiteral, CustomStringConvertible
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: MetadataKey, rhs: MetadataKey) -> Bool { lhs.rawValue < rhs.rawValue }

    /// ``HeartRateSensorLocation`` name.
    public static let heartRateSensorLocation: MetadataKey = "heartRateSensorLocation"
    /// ``HeartRateMotionContext`` name.
    public static let heartRateMotionContext: MetadataKey = "heartRateMotionContext"
    /// The serial number of the device that took the sample, as its maker assigned it (HealthKit's
    /// HKMetadataKeyDeviceSerialNumber): a Bluetooth device's Device Information Serial Number
    /// String (0x2A25), an ANT+ strap's 32-bit serial in decimal.
    public static let deviceSerialNumber: MetadataKey = "deviceSerialNumber"
    /// An identifier the source system uses for the sample.
    public static let externalUUID: MetadataKey = "externalUUID"
    /// With ``syncVersion``: a later version of the same sync identifier replaces the earlier.
    public static let syncIdentifier: MetadataKey = "syncIdentifier"
    /// An integer; see ``syncIdentifier``.
    public static let syncVersion: MetadataKey = "syncVersion"
    /// `true` on a record still being built (a heartbeat series as it grows): a later version with
    /// the same uuid and a higher ``syncVersion`` extends it. Stores keep the latest version, so
    /// a crash loses little; sinks that deliver each record once skip such versions.
    public static let provisional: MetadataKey = "healthgate.provisional"
    /// The device's battery level in percent, as the device last reported it (integer): when a
    /// Bluetooth connection was made, from an ANT+ strap's battery page.
    public static let batteryLevel: MetadataKey = "healthgate.batteryLevel"
    /// The time zone the sample was recorded in, as a tz database name (`Europe/Berlin`), like
    /// HealthKit's time-zone key: it lets a later reader put the sample in the day it was
    /// taken on, wherever the reader is.
    public static let timeZone: MetadataKey = "timeZone"
    /// Provenance, as HealthKit's source revision: the gateway that received the sample…
    public static let gatewayName: MetadataKey = "healthgate.gateway"
    /// …the version of healthgate it ran…
    public static let gatewayVersion: MetadataKey = "healthgate.version"
    /// …and the configured source (plugin instance) that produced it.
    public static let sourceName: MetadataKey = "healthgate.source"
    /// `true` on a record that came by a Bluetooth broadcast (an advertisement), not a
    /// connection: every advertisement source sets it, so a strap's radio is told
    /// (``StrapRadio``).
    public static let broadcast: MetadataKey = "healthgate.broadcast"
    /// On a quantity read out of a quantity series (``QuantitySeriesSample/quantitySample(at:)``):
    /// the series' uuid, the object a deletion or a sync client deals with.
    public static let series: MetadataKey = "healthgate.series"
    /// The person the reading belongs to, by name, as the gateway attributed it when it stored
    /// the record (``PersonAttribution``); absent on an unattributed reading.
    public static let person: MetadataKey = "healthgate.person"
    /// The user index a shared device sent with the measurement (integer): the Weight Scale,
    /// Body Composition and Blood Pressure profiles' User ID field, 0 to 254.
    public static let userIndex: MetadataKey = "healthgate.userIndex"
    /// On a participant's workout: the participant's name (a group workout's member).
    public static let participant: MetadataKey = "healthgate.participant"
}

/// A metadata value: JSON's scalar types.
public enum MetadataValue: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)

    public var description: String {
        switch self {
        case .string(let value): value
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        }
    }
}

extension MetadataValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "metadata values are strings, numbers or booleans")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        }
    }
}

/// Sample metadata: typed accessors for the well-known keys, a subscript for custom keys.
/// Encodes as a flat JSON object with keys in sorted order.
public struct Metadata: Hashable, Sendable, Codable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var values: [MetadataKey: MetadataValue]

    public init() { values = [:] }
    public init(dictionaryLiteral elements: (MetadataKey, MetadataValue)...) {
        values = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    public subscript(key: MetadataKey) -> MetadataValue? {
        get { values[key] }
        set { values[key] = newValue }
    }

    /// This metadata with every entry of `defaults` whose key it does not have: its own values win.
    public func filling(from defaults: Metadata) -> Metadata {
        // Nothing to add, or nothing to keep: the other value as it is, its storage shared.
        if defaults.values.isEmpty { return self }
        if values.isEmpty { return defaults }
        var filled = self
        filled.values.merge(defaults.values) { own, _ in own }
        return filled
    }

    /// Makes room for `count` entries in all, so that adding up to that many allocates once:
    /// a reader that adds keys to every record it makes (its sync keys) saves a resize each.
    public mutating func reserveCapacity(_ count: Int) {
        // Dictionary's reserveCapacity runs unspecialized (it reached the generic metadata
        // cache on every call): a dictionary is made at its size instead and the entries copied
        // in, for a record without stored entries and for one with a few (an attributed
        // reading's person).
        guard count > values.count else { return }
        var grown = [MetadataKey: MetadataValue](minimumCapacity: count)
        for (key, value) in values { grown[key] = value }
        values = grown
    }

    public var isEmpty: Bool { values.isEmpty }
    public var count: Int { values.count }

    /// Entries in key order.
    public func makeIterator() -> some IteratorProtocol<(key: MetadataKey, value: MetadataValue)> {
        values.sorted { $0.key < $1.key }.makeIterator()
    }

    public var heartRateSensorLocation: HeartRateSensorLocation? {
        get { stringValue(.heartRateSensorLocation).flatMap(HeartRateSensorLocation.init(name:)) }
        set { values[.heartRateSensorLocation] = newValue.map { .string($0.name) } }
    }

    public var heartRateMotionContext: HeartRateMotionContext? {
        get { stringValue(.heartRateMotionContext).flatMap(HeartRateMotionContext.init(name:)) }
        set { values[.heartRateMotionContext] = newValue.map { .string($0.name) } }
    }

    public var deviceSerialNumber: String? {
        get { stringValue(.deviceSerialNumber) }
        set { values[.deviceSerialNumber] = newValue.map { .string($0) } }
    }

    public var externalUUID: String? {
        get { stringValue(.externalUUID) }
        set { values[.externalUUID] = newValue.map { .string($0) } }
    }

    public var syncIdentifier: String? {
        get { stringValue(.syncIdentifier) }
        set { values[.syncIdentifier] = newValue.map { .string($0) } }
    }

    public var syncVersion: Int64? {
        get {
            if case .integer(let version)? = values[.syncVersion] { return version }
            return nil
        }
        set { values[.syncVersion] = newValue.map { .integer($0) } }
    }

    private func stringValue(_ key: MetadataKey) -> String? {
        if case .string(let text)? = values[key] { return text }
        return nil
    }

    public init(from decoder: any Decoder) throws {
        let raw = try [String: MetadataValue](from: decoder)
        values = Dictionary(uniqueKeysWithValues: raw.map { (MetadataKey($0.key), $0.value) })
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try container.encode(value, forKey: AnyKey(key.rawValue))
        }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

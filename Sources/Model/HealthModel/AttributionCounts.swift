/// What the store's writer did with the readings it attributed so far, as `status` and
/// `/metrics` report it (`HealthStore.attributionCounts`).
public struct AttributionCounts: Hashable, Sendable, Codable {
    /// Readings committed with a person.
    public var attributed = 0
    /// Readings committed with no person, by ``PersonAttribution/UnattributedReason``
    /// (its raw value).
    public var unattributed: [String: Int] = [:]
    /// Readings not stored: an erased person's, dated before their erase.
    public var erased = 0

    /// All the readings committed with no person.
    public var unattributedTotal: Int { unattributed.values.reduce(0, +) }

    /// No readings yet.
    public init() {}

    /// Adds `other`'s counts.
    public mutating func add(_ other: AttributionCounts) {
        attributed += other.attributed
        unattributed.merge(other.unattributed, uniquingKeysWith: +)
        erased += other.erased
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        attributed = try container.decode(Int.self, forKey: .attributed)
        unattributed = try container.decode([String: Int].self, forKey: .unattributed)
        // Absent from a gateway before issue 77.
        erased = try container.decodeIfPresent(Int.self, forKey: .erased) ?? 0
    }
}

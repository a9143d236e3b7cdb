/// What a generic observation's number (`mdc.{type}.{unit}`) is when it is not a measured
/// value, as ``MetadataKey/mdcValueKind`` names it: the one reading of the key, for the source
/// that writes it and the receivers that send it.
///
/// A string or TLV-encoded observation has no number; it is stored as one observation (the
/// value 1, a count, as HealthKit stores an event such as an inhaler's use) whose content is its
/// metadata, so that every store query, statistic and sink that carries metadata carries it.
public enum MDCValueKind: String, Hashable, Sendable, CaseIterable {
    /// The value is an MDC code the device sent (a simple discrete or discrete event observation).
    case code
    /// The value is a state/event bit string, read as a little-endian number.
    case bits
    /// The value is 1, the text is ``MetadataKey/mdcText`` (a string observation).
    case text
    /// The value is 1, the content is the attributes ``Metadata/mdcAttributes`` (a TLV-encoded
    /// observation).
    case attributes
}

extension Metadata {
    /// The value kind (``MetadataKey/mdcValueKind``); nil for a measured value, or a kind this
    /// version does not know.
    public var mdcValueKind: MDCValueKind? {
        get {
            guard case .string(let name)? = self[.mdcValueKind] else { return nil }
            return MDCValueKind(rawValue: name)
        }
        set { self[.mdcValueKind] = newValue.map { .string($0.rawValue) } }
    }

    /// The observation's attributes (``MetadataKey/mdcAttribute(_:occurrence:)``), by type and
    /// then occurrence: each attribute's MDC type and value.
    public var mdcAttributes: [(type: UInt32, value: MetadataValue)] {
        var found: [(type: UInt32, occurrence: Int, value: MetadataValue)] = []
        for (key, value) in values where key.rawValue.hasPrefix(MetadataKey.mdcAttributePrefix) {
            let parts = key.rawValue.dropFirst(MetadataKey.mdcAttributePrefix.count).split(separator: ".")
            guard let first = parts.first, let type = UInt32(first), parts.count <= 2 else { continue }
            let occurrence = parts.count == 2 ? Int(parts[1]) ?? 0 : 1
            guard occurrence >= 1 else { continue }
            found.append((type, occurrence, value))
        }
        return found.sorted { ($0.type, $0.occurrence) < ($1.type, $1.occurrence) }.map { ($0.type, $0.value) }
    }
}

public import HealthModel
import SQLite

// How metadata is stored: the canonical encoding that identifies a metadata set, and the
// `value_type`/`value` columns of its entries. One place, used by the writer, the version-2
// migration and the reader, so that they cannot disagree.
extension StoreSchema {
    /// The canonical encoding of a metadata set: the bytes stored in `metadata_sets.canonical`,
    /// by which the writer finds a set already stored.
    ///
    /// Exact and deterministic: two sets get the same bytes exactly when they have the same keys
    /// (compared as UTF-8 bytes) with values of the same type and the same bits. So `1` (integer),
    /// `1.0` (double) and `true` (bool) differ, `0.0` and `-0.0` differ, and two strings that
    /// Swift compares equal under Unicode canonical equivalence but that are spelled with
    /// different code points differ too: what is stored is what was written.
    ///
    /// Format (version 1, the first byte), all integers big-endian:
    /// ```
    /// 0x01                       format version
    /// UInt32                     number of entries
    /// per entry, keys ascending by their UTF-8 bytes:
    ///   UInt32, bytes            the key's UTF-8 length, then its UTF-8
    ///   UInt8                    the type: "s" string, "i" integer, "d" double, "b" bool
    ///   string:  UInt32, bytes   the UTF-8 length, then the UTF-8
    ///   integer: Int64           two's complement
    ///   double:  UInt64          the IEEE 754 bit pattern (Double.bitPattern)
    ///   bool:    UInt8           0 or 1
    /// ```
    /// Every entry of `entries` is encoded, `syncIdentifier` and `syncVersion` included (the
    /// set of a sample with only one of them holds it; records keep them in their own columns).
    public static func canonicalEncoding(of entries: Metadata) -> [UInt8] {
        var bytes: [UInt8] = []
        var scratch: [(key: MetadataKey, value: MetadataValue)] = []
        appendCanonicalEncoding(of: entries, to: &bytes, sorting: &scratch)
        return bytes
    }

    /// Appends ``canonicalEncoding(of:)`` to `bytes`. `scratch` is working storage for the
    /// sorted entries, passed in so that a caller encoding set after set reuses its capacity
    /// (no allocation per set on the writer's hot path); its contents on return are unspecified.
    static func appendCanonicalEncoding(
        of entries: Metadata, to bytes: inout [UInt8], sorting scratch: inout [(key: MetadataKey, value: MetadataValue)]
    ) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: entries.values)
        // By UTF-8 bytes, not Swift's String ordering: that one compares canonically equivalent
        // spellings as equal, so it would not be a total order on the bytes we encode.
        scratch.sort { $0.key.rawValue.utf8.lexicographicallyPrecedes($1.key.rawValue.utf8) }
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        func append(_ text: String) {
            let utf8 = text.utf8
            append(UInt32(utf8.count))
            // One copy from a native string's contiguous UTF-8, instead of a byte-by-byte iteration.
            if utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
                bytes.append(contentsOf: utf8)
            }
        }
        bytes.append(1)
        append(UInt32(scratch.count))
        for (key, value) in scratch {
            append(key.rawValue)
            switch value {
            case .string(let text):
                bytes.append(UInt8(ascii: "s"))
                append(text)
            case .integer(let number):
                bytes.append(UInt8(ascii: "i"))
                append(number)
            case .double(let number):
                bytes.append(UInt8(ascii: "d"))
                append(number.bitPattern)
            case .bool(let flag):
                bytes.append(UInt8(ascii: "b"))
                bytes.append(flag ? 1 : 0)
            }
        }
    }

    /// The keys the gateway stamps on every record of a run (its provenance: the gateway's name,
    /// version and time zone, and the source; the clock base: the boot and its wall clock). A
    /// set holding them and entries of its own is stored as the set of these keys, shared by the
    /// run's records, and a set of the rest that extends it (schema version 16).
    static let runKeys: Set<MetadataKey> = [
        .gatewayName, .gatewayVersion, .timeZone, .sourceName, .bootID, .clockBase,
    ]

    /// The keys whose values belong to one record (an HRV sample's heartbeat series and interval
    /// count): a set holding them and other entries is stored as a set of these that extends the
    /// set of the others (version 17), which the device's other records share.
    static let objectKeys: Set<MetadataKey> = [.heartbeatSeries, .variabilityIntervals]

    /// `entries` split into those with a key in `keys` and the rest; nil when one of the two would
    /// be empty.
    static func partition(_ entries: Metadata, by keys: Set<MetadataKey>) -> (inKeys: Metadata, rest: Metadata)? {
        var inKeys = Metadata(), rest = Metadata()
        for (key, value) in entries.values {
            if keys.contains(key) { inKeys[key] = value } else { rest[key] = value }
        }
        return inKeys.isEmpty || rest.isEmpty ? nil : (inKeys, rest)
    }

    /// How a set of `entries` is stored: as its own entries extending the set of `shared` (the
    /// record's object keys extending the rest, else the rest extending the run's keys), or
    /// whole (nil). A set is at most three deep: object, device, run.
    static func extensionSplit(_ entries: Metadata) -> (shared: Metadata, own: Metadata)? {
        if let (object, rest) = partition(entries, by: objectKeys) { return (rest, object) }
        if let (run, rest) = partition(entries, by: runKeys) { return (run, rest) }
        return nil
    }

    /// The canonical encoding of a set that extends the set `parent` with `own` (format 2):
    /// `0x02`, the parent's id (Int64, big-endian), then ``canonicalEncoding(of:)`` of `own`.
    /// Two such sets are one exactly when they extend the same set with the same entries.
    static func appendCanonicalEncoding(
        of own: Metadata, extending parent: Int64, to bytes: inout [UInt8],
        sorting scratch: inout [(key: MetadataKey, value: MetadataValue)]
    ) {
        bytes.append(2)
        withUnsafeBytes(of: parent.bigEndian) { bytes.append(contentsOf: $0) }
        appendCanonicalEncoding(of: own, to: &bytes, sorting: &scratch)
    }

    /// A condition on `metadata_entries.set_id` that holds for the entries of the set whose id
    /// is the SQL expression `id`, its parent's (version 16) and its grandparent's (version 17)
    /// included: for a reader of one set.
    static func entriesOfSet(_ id: String) -> String {
        """
        set_id IN (\(id), (SELECT parent_id FROM metadata_sets WHERE id = \(id)),
            (SELECT p.parent_id FROM metadata_sets c JOIN metadata_sets p ON p.id = c.parent_id WHERE c.id = \(id)))
        """
    }

    /// The entries of `metadata` that go into the metadata set of a correlation, heartbeat series
    /// or workout, or of a quantity sample with both sync keys: all but `syncIdentifier` and
    /// `syncVersion`, which those records keep in their own columns (a sample in its
    /// `sample_sync` row, version 17). A sample with only one of them keeps it in its set.
    static func storedEntries(of metadata: Metadata) -> Metadata {
        // Look before removing, so that the common case (no sync keys) copies nothing.
        guard metadata[.syncIdentifier] != nil || metadata[.syncVersion] != nil else { return metadata }
        var entries = metadata
        entries[.syncIdentifier] = nil
        entries[.syncVersion] = nil
        return entries
    }

    /// Binds an entry's `value_type` (parameter `typeIndex`) and `value` (`typeIndex + 1`).
    /// Booleans are stored as the integers 0 and 1.
    static func bind(_ value: MetadataValue, to statement: SQLiteStatement, typeAt typeIndex: Int32) {
        switch value {
        case .string(let text):
            statement.bind("string", at: typeIndex)
            statement.bind(text, at: typeIndex + 1)
        case .integer(let number):
            statement.bind("integer", at: typeIndex)
            statement.bind(number, at: typeIndex + 1)
        case .double(let number):
            statement.bind("double", at: typeIndex)
            statement.bind(number, at: typeIndex + 1)
        case .bool(let flag):
            statement.bind("bool", at: typeIndex)
            statement.bind(Int64(flag ? 1 : 0), at: typeIndex + 1)
        }
    }

    /// The value of a stored entry, or nil when `value` does not fit `valueType`. The inverse
    /// of ``bind(_:to:typeAt:)``, and as lenient as version 1's reader was with rows written by
    /// hand: an integer read as a double, a REAL read as an integer truncated toward zero (for
    /// `integer` and `bool`), any non-zero integer as `true`.
    static func metadataValue(valueType: String?, value: SQLiteValue) -> MetadataValue? {
        switch (valueType, value) {
        case ("string", .text(let text)): .string(text)
        case ("integer", .integer(let number)): .integer(number)
        case ("integer", .real(let number)): Int64(exactly: number.rounded(.towardZero)).map(MetadataValue.integer)
        case ("double", .real(let number)): .double(number)
        case ("double", .integer(let number)): .double(Double(number))
        case ("bool", .integer(let number)): .bool(number != 0)
        case ("bool", .real(let number)): Int64(exactly: number.rounded(.towardZero)).map { .bool($0 != 0) }
        default: nil
        }
    }
}

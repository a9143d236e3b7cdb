import HealthModel
import SQLite

/// Narrows sample queries and statistics to the samples of one device and/or with metadata
/// entries. Every field given must match (AND); an empty filter matches every sample.
public struct SampleFilter: Hashable, Sendable {
    /// The device's name (`Device.name`), exactly.
    public var deviceName: String?
    /// The device's local identifier (its BLE address or serial path), exactly.
    public var localIdentifier: String?
    /// The device's manufacturer, exactly.
    public var manufacturer: String?
    /// The device's model, exactly.
    public var model: String?
    /// Metadata entries the sample must have, key to value as text: strings as stored, integers
    /// in decimal, booleans `true`/`false`, doubles as SQLite prints them (`72.0`, `0.5`).
    public var metadata: [String: String]
    /// Whose samples: one person's, or the unattributed ones (``HealthModel/MetadataKey/person``).
    public var person: PersonSelection?

    /// A filter; nil fields match anything.
    public init(
        deviceName: String? = nil, localIdentifier: String? = nil, manufacturer: String? = nil, model: String? = nil,
        metadata: [String: String] = [:], person: PersonSelection? = nil
    ) {
        self.deviceName = deviceName
        self.localIdentifier = localIdentifier
        self.manufacturer = manufacturer
        self.model = model
        self.metadata = metadata
        self.person = person
    }

    /// Whose samples a filter selects.
    public enum PersonSelection: Hashable, Sendable {
        /// The samples attributed to the person with this name.
        case named(String)
        /// The samples attributed to nobody.
        case unattributed
    }

    /// Whether the filter matches every sample.
    public var isEmpty: Bool {
        deviceName == nil && localIdentifier == nil && manufacturer == nil && model == nil && metadata.isEmpty && person == nil
    }

    /// The first parameter number the filter uses: queries keep ?1 … ?4 for their own.
    static let firstParameter = 5

    /// An SQL condition on the samples table aliased `alias` (starting with " AND ", or empty),
    /// with its bindings for parameters ?5 onwards.
    func condition(alias: String) -> (sql: String, bindings: [SQLiteValue]) {
        guard !isEmpty else { return ("", []) }
        var sql = ""
        var bindings: [SQLiteValue] = []
        func parameter(_ value: SQLiteValue) -> String {
            bindings.append(value)
            return "?\(Self.firstParameter + bindings.count - 1)"
        }
        let device = [("name", deviceName), ("local_identifier", localIdentifier), ("manufacturer", manufacturer), ("model", model)]
            .compactMap { column, value in value.map { "\(column) = \(parameter(.text($0)))" } }
        if !device.isEmpty {
            sql += " AND \(alias).device_id IN (SELECT id FROM devices WHERE \(device.joined(separator: " AND ")))"
        }
        var metadata = metadata
        switch person {
        case .named(let name): metadata[MetadataKey.person.rawValue] = name
        case .unattributed:
            sql += """
                 AND (\(alias).metadata_set_id IS NULL OR \(alias).metadata_set_id NOT IN
                    (SELECT set_id FROM metadata_set_entries WHERE key = \(parameter(.text(MetadataKey.person.rawValue)))))
                """
        case nil: break
        }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            let inSet = """
                \(alias).metadata_set_id IN (SELECT set_id FROM metadata_set_entries WHERE key = \(parameter(.text(key)))
                    AND (CASE value_type WHEN 'bool' THEN CASE WHEN value THEN 'true' ELSE 'false' END
                        ELSE CAST(value AS TEXT) END) = \(parameter(.text(value))))
                """
            // A sample's sync keys are in its `sample_sync` row when its set does not hold them
            // (schema version 17).
            if let column = Self.syncColumns[key] {
                sql += " AND (\(inSet) OR \(alias).anchor IN (SELECT anchor FROM sample_sync WHERE CAST(\(column) AS TEXT) = \(parameter(.text(value)))))"
            } else {
                sql += " AND " + inSet
            }
        }
        return (sql, bindings)
    }

    /// The `sample_sync` column of each sync key.
    private static let syncColumns = [MetadataKey.syncIdentifier.rawValue: "sync_identifier", MetadataKey.syncVersion.rawValue: "sync_version"]

    /// `bindings` padded to the query's own four parameters, then the filter's.
    func bindings(after own: [SQLiteValue]) -> [SQLiteValue] {
        let extra = condition(alias: "s").bindings
        guard !extra.isEmpty else { return own }
        return own + Array(repeating: .null, count: max(0, Self.firstParameter - 1 - own.count)) + extra
    }
}

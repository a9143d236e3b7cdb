import HealthModel
import SQLite

/// The quantity types, units and devices that samples name by small integer ids
/// (`quantity_types`, `units`, `devices`), resolved per query: each id met is looked up once, a
/// unit string is parsed once (parsing costs more than the rest of a row), and a device's eight
/// strings are built once. An id, once written, never changes meaning (device rows are never
/// updated), so a query's answers never go stale.
struct StoreVocabulary {
    private let connection: SQLiteConnection?
    private let path: String
    private var types: [Int64: QuantityType] = [:]
    private var units: [Int64: HealthUnit] = [:]
    private var devices: [Int64: Device] = [:]
    /// For a single known row: its type and unit string, looked up by nothing.
    private var knownType: QuantityType?
    private var knownUnit: String?

    /// A vocabulary that looks ids up through `connection`.
    init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
    }

    /// A vocabulary for one row whose type and unit string the caller read already.
    init(known type: QuantityType, unit: String?, path: String) {
        self.connection = nil
        self.path = path
        self.knownType = type
        self.knownUnit = unit
    }

    /// The type with `id`, for sample `sample` (named in the error).
    mutating func type(_ id: Int64, for sample: SampleID) throws(StoreError) -> QuantityType {
        if let knownType { return knownType }
        if let type = types[id] { return type }
        let name = try text("SELECT identifier FROM quantity_types WHERE id = ?1", id)
        guard let name, let type = QuantityType.named(name) else {
            throw StoreError(.invalidData, path: path, message: "sample \(sample) has an unknown type \(name ?? "id \(id)")")
        }
        types[id] = type
        return type
    }

    /// The unit with `id` of a sample of `type`, for sample `sample` (named in the error). The
    /// type's canonical unit, as most stored units are, is the type's own value, not parsed:
    /// a query meets each unit once, so a short read (the newest sample) parsed it on every call.
    mutating func unit(_ id: Int64, of type: QuantityType, for sample: SampleID) throws(StoreError) -> HealthUnit {
        if let unit = units[id] { return unit }
        var text = knownUnit
        if text == nil { text = try self.text("SELECT unit FROM units WHERE id = ?1", id) }
        guard let text else {
            throw StoreError(.invalidData, path: path, message: "sample \(sample) names unit \(id), which is not stored")
        }
        let unit: HealthUnit
        if text == type.canonicalUnit.unitString {
            unit = type.canonicalUnit
        } else {
            do {
                unit = try HealthUnit(text)
            } catch {
                throw StoreError(.invalidData, path: path, message: "sample \(sample) has an invalid unit: \(error)")
            }
        }
        units[id] = unit
        return unit
    }

    /// The device with `id`, the first time the query meets it read from `devices` by its id, or
    /// made by `fields` from the row for a vocabulary of one known row (which has no connection).
    /// An id without a row is a device without fields, as a LEFT JOIN would give it.
    mutating func device(_ id: Int64, _ fields: () -> Device) throws(StoreError) -> Device {
        if let device = devices[id] { return device }
        let device: Device
        if let connection {
            let row = try HealthStore.run(
                connection, "SELECT \(RowDecoder.deviceColumns) FROM devices d WHERE d.id = ?1", [.integer(id)], path: path
            ).first
            device = Device(
                name: row?.text(0), manufacturer: row?.text(1), model: row?.text(2), hardwareVersion: row?.text(3),
                firmwareVersion: row?.text(4), softwareVersion: row?.text(5), localIdentifier: row?.text(6),
                udiDeviceIdentifier: row?.text(7), radioIdentifier: row?.text(8))
        } else {
            device = fields()
        }
        devices[id] = device
        return device
    }

    private func text(_ sql: String, _ id: Int64) throws(StoreError) -> String? {
        guard let connection else { return nil }
        return try HealthStore.run(connection, sql, [.integer(id)], path: path).first?.text(0)
    }

    /// The id of `type` in `quantity_types`, or nil when no sample of it was ever stored.
    static func typeID(of type: QuantityType, _ connection: SQLiteConnection, path: String) throws(StoreError) -> Int64? {
        try typeAndSpan(of: type, connection, path: path)?.id
    }

    /// The id of `type`, the longest duration of a sample of it and the longest span of a series
    /// of it (first to last quantity's start) ever stored, in µs; nil when nothing of it was ever
    /// stored. A range query on `start_us` reaches back by these to find what reaches into it.
    static func spans(
        of type: QuantityType, _ connection: SQLiteConnection, path: String
    ) throws(StoreError) -> (id: Int64, duration: Int64, series: Int64)? {
        guard let row = try HealthStore.run(
            connection, "SELECT id, max_duration_us, max_series_span_us FROM quantity_types WHERE identifier = ?1",
            [.text(type.identifier)], path: path
        ).first, let id = row.integer(0) else { return nil }
        return (id, row.integer(1) ?? 0, row.integer(2) ?? 0)
    }

    /// The id of `type` and the longest duration, in µs, of a sample of it ever stored; nil when
    /// no sample of it was ever stored.
    static func typeAndSpan(
        of type: QuantityType, _ connection: SQLiteConnection, path: String
    ) throws(StoreError) -> (id: Int64, span: Int64)? {
        guard let row = try HealthStore.run(
            connection, "SELECT id, max_duration_us FROM quantity_types WHERE identifier = ?1", [.text(type.identifier)],
            path: path
        ).first, let id = row.integer(0) else { return nil }
        return (id, row.integer(1) ?? 0)
    }
}

import HealthModel
import SQLite

// Interning: devices, quantity types, units and metadata sets are rows stored once and never
// deleted; records point to them by id. The ids are cached between transactions, and a failed
// transaction's are forgotten.
extension RecordWriter {
    /// After a commit: the caches keep the rows the transaction interned.
    func keepInterned() {
        deviceIDs.commit()
        metadataSets.commit()
        typeIDs.commit()
        unitIDs.commit()
        openSeries.commit()
    }

    /// After a rollback: the caches forget the rows the transaction interned (they are gone),
    /// and the last device, the last type and the spans, which may be among them.
    func forgetInterned() {
        deviceIDs.rollback()
        metadataSets.rollback()
        typeIDs.rollback()
        unitIDs.rollback()
        lastDevice = nil
        lastType = nil
        spans = [:]
        seriesSpans = [:]
        openSeries.rollback()
    }

    /// The id of the metadata set holding `metadata`'s entries, sync keys left out; nil when
    /// nothing is left (no metadata, or only the sync keys).
    func metadataSetID(for metadata: Metadata) throws(SQLiteError) -> Int64? {
        if metadata.isEmpty { return nil }
        let entries = StoreSchema.storedEntries(of: metadata)
        if entries.isEmpty { return nil }
        return try metadataSets.id(of: entries, in: connection)
    }

    /// The id of `type` in `quantity_types` (inserting it the first time) and the id of its
    /// canonical unit in `units`.
    func typeIDs(for type: QuantityType) throws(SQLiteError) -> (type: Int64, canonicalUnit: Int64) {
        // Small strings (every built-in identifier) compare by their bits.
        if let lastType, lastType.identifier == type.identifier { return (lastType.id, lastType.canonicalUnitID) }
        let id: Int64
        if let cached = typeIDs[type.identifier] {
            id = cached
        } else {
            id = try internedID(
                insert: "INSERT INTO quantity_types (identifier) VALUES (?1) ON CONFLICT DO NOTHING",
                select: "SELECT id, max_duration_us FROM quantity_types WHERE identifier = ?1", type.identifier) { row in
                spans[row.integer(0) ?? 0] = row.integer(1) ?? 0
            }
            typeIDs.insert(id, for: type.identifier)
        }
        let canonicalUnitID = try unitID(for: type.canonicalUnit.unitString)
        lastType = (type.identifier, id, canonicalUnitID)
        return (id, canonicalUnitID)
    }

    /// The id of `unit` (a unit string) in `units`, inserting it the first time.
    func unitID(for unit: String) throws(SQLiteError) -> Int64 {
        if let id = unitIDs[unit] { return id }
        let id = try internedID(
            insert: "INSERT INTO units (unit) VALUES (?1) ON CONFLICT DO NOTHING",
            select: "SELECT id FROM units WHERE unit = ?1", unit) { _ in }
        unitIDs.insert(id, for: unit)
        return id
    }

    private func internedID(
        insert: String, select: String, _ text: String, found: (SQLiteRow) -> Void
    ) throws(SQLiteError) -> Int64 {
        try connection.run(insert, [.text(text)])
        guard let row = try connection.query(select, [.text(text)]).first, let id = row.integer(0) else {
            throw SQLiteError(.error, message: "the row just inserted was not found", context: text)
        }
        found(row)
        return id
    }

    /// The id of `sample`'s device, recognized without a copy when it is the last one's.
    func deviceID(of sample: borrowing QuantitySample) throws(SQLiteError) -> Int64? {
        let device = sample.device
        if let lastDevice, lastDevice.device.isIdentical(to: device) { return lastDevice.id }
        let id = try deviceID(for: device)
        lastDevice = (device, id)
        return id
    }

    func deviceID(for device: Device?) throws(SQLiteError) -> Int64? {
        guard let device else { return nil }
        if let id = deviceIDs[device] { return id }
        let fields: [SQLiteValue] = [
            device.name, device.manufacturer, device.model, device.hardwareVersion, device.firmwareVersion,
            device.softwareVersion, device.localIdentifier, device.udiDeviceIdentifier, device.radioIdentifier,
        ].map { $0.map(SQLiteValue.text) ?? .null }
        try connection.run(
            """
            INSERT INTO devices (name, manufacturer, model, hardware_version, firmware_version,
                software_version, local_identifier, udi_device_identifier, radio_identifier)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING
            """, fields)
        guard let id = try connection.query(
            """
            SELECT id FROM devices WHERE name IS ?1 AND manufacturer IS ?2 AND model IS ?3
                AND hardware_version IS ?4 AND firmware_version IS ?5 AND software_version IS ?6
                AND local_identifier IS ?7 AND udi_device_identifier IS ?8 AND radio_identifier IS ?9
            """, fields).first?.integer(0)
        else {
            throw SQLiteError(.error, message: "the device row just inserted was not found",
                              context: device.displayName)
        }
        deviceIDs.insert(id, for: device)
        return id
    }
}

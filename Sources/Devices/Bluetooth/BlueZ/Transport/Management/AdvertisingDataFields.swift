import BLETransport

/// The fields of EIR or LE advertising data that advertisement profiles read: the local name,
/// manufacturer-specific data and service data.
///
/// The data is a run of structures, each a length byte (counting the type and the data), a type
/// byte and the data (Core Specification Vol 3, Part C, §11; the types in the Assigned Numbers'
/// "Common Data Types"): 0x08 shortened and 0x09 complete local name, 0xFF manufacturer data
/// (company identifier, little-endian, then the data), 0x16, 0x20 and 0x21 service data with a
/// 16-, 32- and 128-bit UUID (little-endian) before the data. A length of zero ends the
/// significant part (the rest is padding). Other types are skipped by their length.
struct AdvertisingDataFields: Sendable, Hashable {
    /// The complete local name, else the shortened one; nil when neither is present.
    var name: String?
    /// Manufacturer data by company identifier (the bytes after it); a company given twice keeps
    /// its last block.
    var manufacturerData: [UInt16: [UInt8]] = [:]
    /// Service data by UUID (the bytes after it).
    var serviceData: [BluetoothUUID: [UInt8]] = [:]

    // Assigned Numbers, "Common Data Types".
    static let shortenedName: UInt8 = 0x08
    static let completeName: UInt8 = 0x09
    static let serviceData16: UInt8 = 0x16
    static let serviceData32: UInt8 = 0x20
    static let serviceData128: UInt8 = 0x21
    static let manufacturerSpecific: UInt8 = 0xFF

    /// Parses `data`. Pure.
    /// - Throws: ``ManagementEventError`` `.truncatedStructure` when a structure's length runs
    ///   past the end, or a manufacturer or service data structure is too short for its identifier.
    static func parse(_ data: some Collection<UInt8>) throws(ManagementEventError) -> AdvertisingDataFields {
        var fields = AdvertisingDataFields()
        var shortened: String?
        var rest = Array(data)[...]
        while let length = rest.first {
            if length == 0 { break }
            rest = rest.dropFirst()
            guard rest.count >= Int(length) else {
                throw ManagementEventError(
                    .truncatedStructure, "an advertising data structure of \(length) bytes with \(rest.count) left")
            }
            let type = rest[rest.startIndex]
            let value = rest.dropFirst().prefix(Int(length) - 1)
            rest = rest.dropFirst(Int(length))
            func identifier(_ count: Int) throws(ManagementEventError) -> ArraySlice<UInt8> {
                guard value.count >= count else {
                    throw ManagementEventError(
                        .truncatedStructure,
                        "AD type 0x\(String(type, radix: 16)) of \(value.count) bytes, its identifier takes \(count)")
                }
                return value.prefix(count)
            }
            switch type {
            case completeName:
                fields.name = String(decoding: value, as: UTF8.self)
            case shortenedName:
                shortened = String(decoding: value, as: UTF8.self)
            case manufacturerSpecific:
                let company = try identifier(2)
                fields.manufacturerData[UInt16(company.first ?? 0) | UInt16(company.last ?? 0) << 8] = Array(value.dropFirst(2))
            case serviceData16:
                let uuid = try identifier(2)
                fields.serviceData[BluetoothUUID(UInt16(uuid.first ?? 0) | UInt16(uuid.last ?? 0) << 8)] = Array(value.dropFirst(2))
            case serviceData32, serviceData128:
                let size = type == serviceData32 ? 4 : 16
                if let uuid = uuidFromLittleEndian(try identifier(size)) {
                    fields.serviceData[uuid] = Array(value.dropFirst(size))
                }
            default:
                break
            }
        }
        if fields.name == nil { fields.name = shortened }
        return fields
    }

    /// A 32-bit UUID (on the Base UUID) or a 128-bit one from its little-endian bytes.
    static func uuidFromLittleEndian(_ bytes: ArraySlice<UInt8>) -> BluetoothUUID? {
        let hex = bytes.reversed().map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
        if hex.count == 8 { return BluetoothUUID(string: hex + "-0000-1000-8000-00805f9b34fb") }
        guard hex.count == 32 else { return nil }
        let characters = Array(hex)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
        return BluetoothUUID(string: groups.joined(separator: "-"))
    }
}

public import BLETransport

/// What every simulated connection does alike, from its link and its GATT database: its address
/// is the link's, reads answer from the database while the link is up, the battery level is the
/// database's Battery Level, nothing is ever dropped (payloads are made when the consumer asks),
/// and disconnecting closes the link. A profile's connection supplies its link and database and
/// what writes and notifications do; it may answer some reads itself (a clock, a status).
public protocol SimulatedConnection: BLEConnection {
    /// The link, closed by ``disconnect()``.
    var link: SimulatedLink { get }
    /// The device's characteristics and the values of the readable ones.
    var gatt: SimulatedGATTDatabase { get }
}

extension SimulatedConnection {
    public var address: String { link.address }

    public func hasCharacteristic(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async -> Bool {
        gatt.has(characteristic, in: service)
    }

    /// The database's value; throws `.disconnected` once the link is closed, `.notSupported` for
    /// a characteristic that is not readable.
    public func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8] {
        try link.check()
        return try gatt.read(characteristic, in: service, device: address)
    }

    public var droppedNotifications: Int { 0 }

    public func batteryPercentage() async -> Int? { gatt.readable[.batteryLevel].flatMap(\.first).map(Int.init) }

    public func disconnect() async {
        link.close()
    }
}

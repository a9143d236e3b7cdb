public import BLETransport

/// What every simulated connection does alike, from its link and its GATT database: its address
/// is the link's, reads answer from the database while the link is up, the battery level is the
/// database's Battery Level, descriptors are read from the database and refuse writes, nothing
/// is ever dropped (payloads are made when the consumer asks), and disconnecting closes the link.
/// A profile's connection supplies its link and database and what writes and notifications do;
/// it may answer some reads itself (a clock, a status) and take descriptor writes.
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

    /// The database's descriptor values; throws `.disconnected` once the link is closed,
    /// `.notSupported` for a characteristic the database lacks.
    public func readDescriptors(_ descriptor: BluetoothUUID, of characteristic: BluetoothUUID, in service: BluetoothUUID) async throws
        -> [[UInt8]]
    {
        try link.check()
        return try gatt.descriptors(descriptor, of: characteristic, in: service, device: address).map(\.value)
    }

    /// Refuses every write as a read-only descriptor does (`.failed`; `.notSupported` when there
    /// is no such descriptor). A profile whose device takes descriptor writes implements this
    /// itself, with ``SimulatedGATTDatabase/writableDescriptor(_:at:of:in:device:)``.
    public func writeDescriptor(
        _ value: [UInt8], to descriptor: BluetoothUUID, at index: Int, of characteristic: BluetoothUUID, in service: BluetoothUUID
    ) async throws {
        try link.check()
        let found = try gatt.writableDescriptor(descriptor, at: index, of: characteristic, in: service, device: address)
        throw BLETransportError(.failed, device: address, "descriptor \(found.uuid) of \(characteristic): this simulated device takes no descriptor writes")
    }

    public var droppedNotifications: Int { 0 }

    public func batteryPercentage() async -> Int? { gatt.readable[.batteryLevel].flatMap(\.first).map(Int.init) }

    public func disconnect() async {
        link.close()
    }
}

public import BLETransport
import Synchronization

/// A simulated peripheral's GATT database: its characteristics by service, the values of the
/// readable ones, and their descriptors.
public struct SimulatedGATTDatabase: Sendable {
    public var services: [BluetoothUUID: [BluetoothUUID]]
    public var readable: [BluetoothUUID: [UInt8]]
    /// Descriptors by characteristic, in the GATT database's order (several may share a UUID).
    public var descriptors: [BluetoothUUID: [SimulatedDescriptor]]

    public init(
        services: [BluetoothUUID: [BluetoothUUID]], readable: [BluetoothUUID: [UInt8]],
        descriptors: [BluetoothUUID: [SimulatedDescriptor]] = [:]
    ) {
        self.services = services
        self.readable = readable
        self.descriptors = descriptors
    }

    public func has(_ characteristic: BluetoothUUID, in service: BluetoothUUID) -> Bool {
        services[service]?.contains(characteristic) ?? false
    }

    /// The value of a readable characteristic; `.notSupported` for any other.
    public func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID, device address: String) throws -> [UInt8] {
        guard has(characteristic, in: service), let value = readable[characteristic] else {
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is not readable")
        }
        return value
    }

    /// The descriptors of `characteristic` with the UUID `uuid`, in order (empty when it has
    /// none); `.notSupported` when the database lacks the characteristic.
    public func descriptors(
        _ uuid: BluetoothUUID, of characteristic: BluetoothUUID, in service: BluetoothUUID, device address: String
    ) throws -> [SimulatedDescriptor] {
        guard has(characteristic, in: service) else {
            throw BLETransportError(.notSupported, device: address, "no characteristic \(characteristic) in service \(service)")
        }
        return (descriptors[characteristic] ?? []).filter { $0.uuid == uuid }
    }

    /// The descriptor a write names, when it takes writes: `.notSupported` when there is no such
    /// descriptor, `.failed` when it is read-only (what a peripheral's ATT error Write Not
    /// Permitted, 0x03, becomes).
    public func writableDescriptor(
        _ uuid: BluetoothUUID, at index: Int, of characteristic: BluetoothUUID, in service: BluetoothUUID, device address: String
    ) throws -> SimulatedDescriptor {
        let found = try descriptors(uuid, of: characteristic, in: service, device: address)
        guard found.indices.contains(index) else {
            throw BLETransportError(.notSupported, device: address, "no descriptor \(uuid) number \(index + 1) on \(characteristic)")
        }
        guard found[index].writable else {
            throw BLETransportError(.failed, device: address, "descriptor \(uuid) of \(characteristic): write not permitted (ATT error 0x03)")
        }
        return found[index]
    }
}

/// A descriptor of a simulated characteristic.
public struct SimulatedDescriptor: Sendable, Hashable {
    public var uuid: BluetoothUUID
    /// What a read answers.
    public var value: [UInt8]
    /// Whether the device takes writes of it; its connection's `writeDescriptor` then says what
    /// a write does (the kit's own refuses every write).
    public var writable: Bool

    public init(_ uuid: BluetoothUUID, _ value: [UInt8], writable: Bool = false) {
        self.uuid = uuid
        self.value = value
        self.writable = writable
    }
}

/// Whether a simulated link is still up; closed once, by `disconnect()`.
public final class SimulatedLink: Sendable {
    private let open = Mutex(true)
    public let address: String

    public init(address: String) {
        self.address = address
    }

    public var isOpen: Bool { open.withLock { $0 } }

    public func close() {
        open.withLock { $0 = false }
    }

    /// Throws `.disconnected` once the link is closed.
    public func check() throws {
        guard isOpen else { throw BLETransportError(.disconnected, device: address, "simulated link closed") }
    }
}

public import BLETransport
import Synchronization

/// A simulated peripheral's GATT database: its characteristics by service and the values of the
/// readable ones.
public struct SimulatedGATTDatabase: Sendable {
    public var services: [BluetoothUUID: [BluetoothUUID]]
    public var readable: [BluetoothUUID: [UInt8]]

    public init(services: [BluetoothUUID: [BluetoothUUID]], readable: [BluetoothUUID: [UInt8]]) {
        self.services = services
        self.readable = readable
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

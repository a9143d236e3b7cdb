public import BLETransport
public import GatewayRuntime
import FoundationEssentials
import Synchronization

/// Discovery as simulated transports report it: each peripheral advertising one of the wanted
/// services once, then nothing until the consumer cancels (it idles on the injected clock).
/// Unfolding: each `next()` of the consumer produces one event, so no task is needed.
public func simulatedDiscovery(
    of peripherals: [DiscoveredPeripheral], services: [BluetoothUUID], clock: any GatewayClock
) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
    let found = peripherals.filter { peripheral in peripheral.serviceUUIDs.contains { services.contains($0) } }
    let index = Mutex(0)
    return AsyncThrowingStream(unfolding: {
        let next = index.withLock { value -> Int in
            defer { value += 1 }
            return value
        }
        if next < found.count { return .found(found[next]) }
        while true { try await clock.sleep(for: .seconds(3600)) }
    })
}

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

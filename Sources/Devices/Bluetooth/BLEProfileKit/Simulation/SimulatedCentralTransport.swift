public import BLETransport
public import GatewayRuntime
import Synchronization

/// The Bluetooth stack a profile's simulator runs on, for `healthgate demo` and tests without
/// hardware: the devices its `simulation` block makes (``BluetoothSimulation``). Discovery
/// reports each device advertising one of the wanted services once, then nothing until the
/// consumer cancels (it idles on the injected clock); connecting to a device's address (in any
/// case) makes its connection at once. What the devices are and send is the profile's.
public struct SimulatedCentralTransport<Simulation: BluetoothSimulation>: BLECentralTransport {
    let clock: any GatewayClock
    let devices: SimulatedDevices

    /// The devices `settings` asks for, paced by `clock`.
    public init(clock: any GatewayClock, settings: Simulation = Simulation()) {
        self.clock = clock
        devices = settings.devices(clock: clock)
    }

    /// The simulated devices, as discovery reports them.
    public var peripherals: [DiscoveredPeripheral] { devices.peripherals }

    /// Unfolding: each `next()` of the consumer produces one event, so no task is needed.
    public func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        let found = peripherals.filter { peripheral in peripheral.serviceUUIDs.contains { services.contains($0) } }
        let index = Mutex(0)
        return AsyncThrowingStream(unfolding: { [clock] in
            let next = index.withLock { value -> Int in
                defer { value += 1 }
                return value
            }
            if next < found.count { return .found(found[next]) }
            while true { try await clock.sleep(for: .seconds(3600)) }
        })
    }

    /// Connects at once. Throws `.notFound` for an address no simulated device has.
    public func connect(to address: String) async throws -> any BLEConnection {
        let wanted = address.uppercased()
        guard let index = peripherals.firstIndex(where: { $0.address == wanted }) else {
            throw BLETransportError(.notFound, device: address, "no simulated device has this address")
        }
        return devices.connect(index)
    }
}

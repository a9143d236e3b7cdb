public import BLETransport

/// A profile's simulated devices as ``SimulatedCentralTransport`` needs them: what discovery
/// reports of each, and a connection to one.
public struct SimulatedDevices: Sendable {
    /// The devices as discovery reports them, in order. Made once: each connect looks its device
    /// up by address among them.
    public let peripherals: [DiscoveredPeripheral]
    private let connection: @Sendable (Int) -> any BLEConnection

    /// `devices`, each reported as `peripheral` gives it and connected through `connection`.
    public init<Device: Sendable>(
        _ devices: [Device], peripheral: (Device) -> DiscoveredPeripheral,
        connection: @escaping @Sendable (Device) -> any BLEConnection
    ) {
        peripherals = devices.map(peripheral)
        self.connection = { connection(devices[$0]) }
    }

    /// A new connection to the device at `index` of ``peripherals``.
    func connect(_ index: Int) -> any BLEConnection {
        connection(index)
    }
}

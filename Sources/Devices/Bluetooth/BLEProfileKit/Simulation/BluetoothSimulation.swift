public import GatewayRuntime

/// A profile's `simulation` block (`transport: "simulated"`): the devices its simulator makes.
/// The kit makes the simulated transport from it (``SimulatedCentralTransport``), follows every
/// device it simulates when `maxDevices` is absent, and refuses a simulation of no device.
public protocol BluetoothSimulation: DeclaredConfiguration, Hashable {
    /// How many devices it simulates in all.
    var deviceCount: Int { get }

    /// The simulated devices, made once per transport and paced by `clock`.
    func devices(clock: any GatewayClock) -> SimulatedDevices
}

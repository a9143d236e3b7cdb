public import GatewayRuntime

/// A profile's own `config` keys as the kit needs them: its `simulation` block, from which the
/// kit makes the simulated transport and `maxDevices`' default when simulated, and the checks
/// that tie the profile's keys together.
public protocol BluetoothProfileConfiguration: DeclaredConfiguration, Hashable {
    /// The simulator's devices (``BluetoothSimulation``).
    associatedtype Simulation: BluetoothSimulation

    /// The `simulation` block, declared among the keys with `.simulation(\.simulation)`.
    var simulation: Simulation { get }

    /// Checks what ties the profile's keys together, or to the transport, beyond their declared
    /// ranges and the kit's own check that a simulation simulates a device; no I/O. `simulated`
    /// is whether `transport` is `simulated`. By default nothing.
    /// - Throws: ``PluginConfigurationError`` naming the key inside `config`.
    func validate(simulated: Bool) throws(PluginConfigurationError)
}

extension BluetoothProfileConfiguration {
    /// Nothing ties the keys together: their ranges are declared.
    public func validate(simulated: Bool) throws(PluginConfigurationError) {}
}

public import SampleBus
import GatewayRuntime

/// Makes the BlueZ transport for the `ble-heart-rate` source (`"transport": "bluez"`).
///
/// It connects to the bus named by `DBUS_SYSTEM_BUS_ADDRESS` in `environment.variables` when set
/// (tests point it at a private bus), else to the system bus. `adapter` names the controller
/// (`hci1`); nil uses the first one. Nothing is opened here, so a configuration can be checked
/// on a machine without Bluetooth: a missing bus, bluetoothd or adapter is reported by
/// discovery and connect as ``BLETransportError`` `.unavailable`, which the source retries.
public func makeBlueZTransport(adapter: String?, environment: PluginEnvironment) -> any BLECentralTransport {
    let address = environment.variables["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
    return BlueZTransport(
        busAddress: address, adapter: adapter, clock: environment.clock, logger: environment.logger.child("bluez"))
}

public import SampleBus

/// Makes the BlueZ transport for the `ble-heart-rate` source (`"transport": "bluez"`).
///
/// It connects to the bus named by `DBUS_SYSTEM_BUS_ADDRESS` in `environment.variables` when set
/// (tests point it at a private bus), else to the system bus. `adapter` names the controller
/// (`hci1`); nil uses the first one. Throws ``BLETransportError`` `.unavailable` when the bus
/// cannot be reached; a missing bluetoothd or adapter is reported later, by discovery/connect.
public func makeBlueZTransport(adapter: String?, environment: PluginEnvironment) throws -> any BLECentralTransport {
    let address = environment.variables["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
    return try BlueZTransport(busAddress: address, adapter: adapter, logger: environment.logger.child("bluez"))
}

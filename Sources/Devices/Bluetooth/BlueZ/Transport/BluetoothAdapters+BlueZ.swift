public import BLETransport
public import GatewayRuntime

extension BluetoothAdapters {
    /// The gateway's adapters through BlueZ. Each transport connects to the bus named by
    /// `DBUS_SYSTEM_BUS_ADDRESS` in `variables` when set (tests point it at a private bus), else
    /// to the system bus. Nothing is opened here, so a configuration can be checked on a machine
    /// without Bluetooth: a missing bus, bluetoothd or adapter is reported by discovery and
    /// connect as ``BLETransportError`` `.unavailable`, which the sources retry.
    /// `adapters` is the gateway's `bluetooth.adapters`; `all` lists the adapters BlueZ has
    /// (``BlueZTransport/adapterNames()``) when a source starts. On the system bus advertisement
    /// scans may read the kernel's management socket (``ManagementSocketAccess/kernel``); on
    /// another bus they do not (its bluetoothd's devices are not the kernel's).
    public static func bluez(
        limits: AdapterScheduler.Limits = AdapterScheduler.Limits(), clock: any GatewayClock, logger: Logger,
        variables: [String: String], adapters: AdapterSelection? = nil
    ) -> BluetoothAdapters {
        let address = variables["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
        let logger = logger.child("bluez")
        return BluetoothAdapters(
            limits: limits, clock: clock,
            transport: { adapter in
                BlueZTransport(
                    busAddress: address, adapter: adapter, clock: clock, logger: logger,
                    managementSocket: address == nil ? .kernel : .disabled)
            },
            adapters: adapters,
            listAdapters: { try await BlueZTransport(busAddress: address, adapter: nil, clock: clock, logger: logger).adapterNames() })
    }
}

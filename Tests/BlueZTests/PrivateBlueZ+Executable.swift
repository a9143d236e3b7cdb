import GatewayTesting

extension PrivateBlueZ {
    /// The built executable, with this bus as its system bus (`DBUS_SYSTEM_BUS_ADDRESS`).
    func executable() throws -> HealthgateExecutable {
        var executable = try HealthgateExecutable()
        executable.environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        return executable
    }
}

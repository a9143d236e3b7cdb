import LinuxSystem

/// Whether and how a ``BlueZTransport`` reads advertisements from the kernel's management socket
/// (``BLETransport/ScanPath/managementSocket``): a fact injected like the clock, so that tests
/// give a socket pair and a transport on a private bus never touches the kernel's controllers.
public struct ManagementSocketAccess: Sendable {
    /// Nil when the process may read Device Found events, else why not (for the log).
    let refusal: @Sendable () -> String?
    /// Opens a socket bound to the management channel.
    let open: @Sendable () throws(SystemError) -> FileDescriptor

    init(refusal: @escaping @Sendable () -> String?, open: @escaping @Sendable () throws(SystemError) -> FileDescriptor) {
        self.refusal = refusal
        self.open = open
    }

    /// The kernel's socket (``LinuxSystem/BluetoothManagementSocket``), used when the process's
    /// effective capabilities hold `CAP_NET_ADMIN` (read from /proc/self/status): only a socket
    /// bound with it receives Device Found events.
    public static var kernel: ManagementSocketAccess {
        ManagementSocketAccess(
            refusal: {
                let capabilities: ProcessCapabilities
                do {
                    capabilities = try ProcessCapabilities.current()
                } catch {
                    return "cannot read the process's capabilities (\(error))"
                }
                guard capabilities.holds(ProcessCapabilities.netAdmin) else {
                    return "the process does not hold CAP_NET_ADMIN (CapEff \(String(capabilities.effective, radix: 16)))"
                }
                return nil
            },
            open: { () throws(SystemError) -> FileDescriptor in try BluetoothManagementSocket.open() })
    }

    /// Never: the transport scans by the Advertisement Monitor or discovery only (a bluetoothd
    /// on a private bus, whose devices are not the kernel's).
    public static var disabled: ManagementSocketAccess {
        ManagementSocketAccess(
            refusal: { "the management socket is not used with a bus other than the system bus" },
            open: { () throws(SystemError) -> FileDescriptor in throw SystemError("socket", errno: .addressFamilyNotSupported) })
    }
}

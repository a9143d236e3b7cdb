import BLEProfileKit
import BlueZ
import FoundationEssentials
import GatewayRuntime

/// What the Bluetooth commands (`scan`, `pair`) share: the `--adapter` option, the range of
/// `--timeout`, and the BlueZ transport they talk through.
enum BluetoothCommandOptions {
    static let options = [
        OptionSpec(name: "adapter", value: "hciN", help: "The Bluetooth adapter (default: the first)."),
    ]

    /// `--timeout` in seconds (0 < t ≤ 3600), `defaultSeconds` when absent.
    static func timeout(_ arguments: ParsedArguments, defaultSeconds: Double) throws(CommandError) -> Double {
        let timeout = try arguments.double("timeout") ?? defaultSeconds
        guard timeout > 0, timeout <= 3600 else {
            throw CommandError(.usage, "--timeout must be between 0 and 3600 seconds, got \(timeout)")
        }
        return timeout
    }

    /// The BlueZ transport on `--adapter` (a name such as hci0; default the first), on the bus
    /// `DBUS_SYSTEM_BUS_ADDRESS` names, else the system bus; logs at `level` to stderr.
    static func transport(
        _ arguments: ParsedArguments, context: CommandContext, label: String, level: LogLevel
    ) throws(CommandError) -> BlueZTransport {
        let adapter = arguments.value("adapter")
        if let adapter, adapter.isEmpty || adapter.contains("/") {
            throw CommandError(.usage, "--adapter expects a name such as hci0, got \"\(adapter)\"")
        }
        let logger = Logger(label: label, sink: StandardErrorLogSink(context: context), level: level)
        let bus = context.variables["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
        return BlueZTransport(
            busAddress: bus, adapter: adapter, clock: SystemClock(), logger: logger,
            managementSocket: bus == nil ? .kernel : .disabled)
    }
}

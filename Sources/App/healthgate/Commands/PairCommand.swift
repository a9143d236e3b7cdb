import GatewayRuntime
import AsyncPrimitives
import BLEProfileKit
import BlueZ
import BLETransport
import FoundationEssentials
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// `healthgate pair ADDRESS`: pairs (bonds) a device that requires it, through BlueZ.
enum PairCommand {
    static let command = Command(
        name: "pair", summary: "Pair with a Bluetooth LE device that requires bonding.",
        usage: "pair ADDRESS [--passkey N] [--adapter hciN] [--timeout SECONDS] | pair --forget ADDRESS",
        discussion: """
            Pairs the gateway's adapter with the device at ADDRESS through bluetoothd, with \
            healthgate's own pairing agent: "just works" for a device without a display or \
            keys; for a device that asks for a passkey, the one given with --passkey (a fixed \
            passkey printed on the device or in its manual), else the one typed at the prompt \
            (the device shows it). The device is then marked trusted. BlueZ keeps the bond \
            (the keys) across restarts; healthgate stores nothing, so pairing is needed once \
            per device and adapter. Put the device into pairing mode first (see its manual).

            A source can pair by itself instead: give the device's entry "pair": true or \
            "passkey": N in the configuration.

            --forget removes the device and its bond from BlueZ (Adapter1.RemoveDevice).

            Needs bluetoothd and permission to talk to it on the system bus. \
            DBUS_SYSTEM_BUS_ADDRESS selects another bus. Exits 0 when paired (or already \
            paired), 1 when the device was not seen or refused, 69 without Bluetooth.
            """,
        options: [
            OptionSpec(name: "passkey", value: "N", help: "The device's six-digit passkey (0-999999)."),
            OptionSpec(name: "timeout", value: "SECONDS", help: "How long to look for the device (default 30)."),
            OptionSpec(name: "forget", value: nil, help: "Remove the device and its bond instead."),
        ] + BluetoothCommandOptions.options
    ) { arguments, context in
        let given = try arguments.positional(0, "the device ADDRESS (six hex bytes with colons: AA:BB:CC:DD:EE:FF)")
        let address = given.uppercased()
        guard DeviceMatcher.isAddress(address) else {
            throw CommandError(
                .usage, "\"\(given)\" is not a Bluetooth address: an address is six hex bytes separated by colons, "
                    + "as in AA:BB:CC:DD:EE:FF ('healthgate scan' lists the addresses around)")
        }
        let passkey = try arguments.integer("passkey")
        if let passkey, passkey < 0 || passkey > Int(DevicePairing.passkeyRange.upperBound) {
            throw CommandError(.usage, "--passkey has six digits, 0 to 999999; got \(passkey)")
        }
        let timeout = try BluetoothCommandOptions.timeout(arguments, defaultSeconds: 30)
        let transport = try BluetoothCommandOptions.transport(arguments, context: context, label: "pair", level: .info)
        do {
            if arguments.flag("forget") {
                let forgotten = try await transport.forget(address: address)
                context.print(forgotten ? "forgot \(address): BlueZ removed it and its bond" : "BlueZ does not know \(address)")
                return .success
            }
            guard try await transport.find(address: address, timeout: .seconds(timeout)) else {
                throw CommandError(
                    .failure, "\(address) was not seen in \(Int(timeout)) s: wake the device or put it into pairing mode, and try again")
            }
            let paired = try await transport.pair(
                address: address, pairing: DevicePairing(passkey: passkey.map(UInt32.init)),
                prompt: passkey == nil && isatty(0) == 1 ? askForPasskey : nil)
            context.print(paired ? "paired \(address); BlueZ keeps the bond" : "\(address) is already paired")
            return .success
        } catch let error as BLETransportError where error.code == .unavailable {
            throw CommandError(.unavailable, "no Bluetooth: \(error.message)")
        } catch let error as BLETransportError {
            throw CommandError(.failure, error.description)
        }
    }

    /// Asks on the terminal for the passkey the device shows, off the cooperative pool.
    @Sendable static func askForPasskey(_ address: String) async -> UInt32? {
        await QueueExecutor(label: "healthgate.pair.prompt").run { () -> UInt32? in
            let prompt = Array("passkey shown on \(address): ".utf8)
            _ = prompt.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            guard let line = readLine()?.trimmed(), let value = UInt32(line),
                DevicePairing.passkeyRange.contains(value)
            else { return nil }
            return value
        }
    }
}

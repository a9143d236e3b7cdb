import GatewayRuntime
import BLECentral
import BLETransport
import AsyncPrimitives
import FoundationEssentials
import HeartRateMonitor

/// `healthgate scan`: lists nearby heart-rate monitors and foot pods through BlueZ.
enum ScanCommand {
    static let command = Command(
        name: "scan", summary: "List nearby Bluetooth LE heart-rate monitors and foot pods.",
        usage: "scan [--timeout SECONDS] [--adapter hciN]",
        discussion: """
            Discovers LE peripherals advertising the Heart Rate (180d) or Running Speed and \
            Cadence (1814) service through BlueZ, for --timeout seconds (default 10), using the \
            same discovery code as the ble-heart-rate source, then prints each one's address, \
            name, signal strength and services. To follow only that device, put its address \
            into the source's "devices" list, as in this entry of "sources": \
            {"kind": "ble-heart-rate", "config": {"devices": ["AA:BB:CC:DD:EE:FF"]}}

            Needs bluetoothd and permission to talk to it on the system bus (see the \
            HeartRateMonitor plugin's README). DBUS_SYSTEM_BUS_ADDRESS selects another bus.

            Exits 69 when there is no Bluetooth (no bluetoothd, no adapter, adapter off).
            """,
        options: [
            OptionSpec(name: "timeout", value: "SECONDS", help: "How long to scan (default 10)."),
        ] + BluetoothCommandOptions.options
    ) { arguments, context in
        let timeout = try BluetoothCommandOptions.timeout(arguments, defaultSeconds: 10)
        let transport = try BluetoothCommandOptions.transport(arguments, context: context, label: "scan", level: .warning)
        let found = try await scan(transport, for: .seconds(timeout))
        print(found, context: context)
        return .success
    }

    /// Runs discovery for `duration` and returns the peripherals still present at the end (or
    /// when discovery ends early).
    static func scan(_ transport: BlueZTransport, for duration: Duration) async throws -> [DiscoveredPeripheral] {
        let services: [BluetoothUUID] = [.heartRateService, .runningSpeedAndCadenceService]
        let seen = AsyncCondition<[String: DiscoveredPeripheral]>([:])
        _ = try await race(sleep: { try await Task.sleep(for: duration) }) {
            do {
                for try await event in transport.discover(services: services) {
                    switch event {
                    case .found(let peripheral): seen.update { $0[peripheral.address] = peripheral }
                    case .lost(let address): seen.update { $0[address] = nil }
                    }
                }
            } catch let error as BLETransportError where error.code == .unavailable {
                throw CommandError(.unavailable, "no Bluetooth: \(error.message)")
            }
        }
        return Array(seen.value.values)
    }

    private static func print(_ peripherals: [DiscoveredPeripheral], context: CommandContext) {
        guard !peripherals.isEmpty else {
            context.print("No heart-rate monitors or foot pods found.")
            return
        }
        let sorted = peripherals.sorted { ($0.rssi ?? -999, $1.address) > ($1.rssi ?? -999, $0.address) }
        let rows = sorted.map { peripheral in
            [
                peripheral.address, peripheral.name ?? "-", peripheral.rssi.map { "\($0) dBm" } ?? "-",
                peripheral.serviceUUIDs.map(serviceName).joined(separator: ","),
            ]
        }
        let header = ["ADDRESS", "NAME", "RSSI", "SERVICES"]
        let widths = (0..<3).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            var line = ""
            for column in 0..<3 { line += row[column].padded(toLength: widths[column] + 2) }
            context.print(line + row[3])
        }
    }

    private static func serviceName(_ uuid: BluetoothUUID) -> String {
        switch uuid {
        case .heartRateService: "heart-rate"
        case .runningSpeedAndCadenceService: "running-speed-cadence"
        case .batteryService: "battery"
        case .deviceInformationService: "device-information"
        default: uuid.description
        }
    }
}

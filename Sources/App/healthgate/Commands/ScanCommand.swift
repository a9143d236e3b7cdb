import BLEAdvertisementKit
import BuiltinPlugins
import GatewayRuntime
import BLEProfileKit
import BlueZ
import BLETransport
import AsyncPrimitives
import FoundationEssentials
import SampleBus
import SerialDevices

/// `healthgate scan`: lists nearby Bluetooth LE devices of every kind the catalog's Bluetooth
/// sources read, with the configuration entry that follows them.
enum ScanCommand {
    /// One kind of device and the source that reads it.
    struct Profile: Sendable {
        let kind: BluetoothDeviceKind
        let source: String
    }

    /// Every kind of device the compiled-in Bluetooth sources read, in catalog order.
    static func profiles(in catalog: PluginCatalog) -> [Profile] {
        catalog.bluetoothSources.flatMap { kind, source in source.deviceKinds.map { Profile(kind: $0, source: kind) } }
    }

    /// The scans of the catalog's serial members (`scan --kind ant`), with the member's kind.
    static func serialScans(in catalog: PluginCatalog) -> [(source: String, scan: SerialDeviceScan)] {
        catalog.serialSources.compactMap { kind, source in source.scan.map { (kind, $0) } }
    }

    static let command = Command(
        name: "scan", summary: "List nearby Bluetooth LE devices the gateway can read (or ANT+ straps: --kind ant).",
        usage: "scan [--timeout SECONDS] [--kind KIND]... [--adapter hciN] [--path TTY]",
        discussion: """
            Discovers LE peripherals through BlueZ for --timeout seconds (default 10), using the \
            same discovery code as the Bluetooth sources, and prints each device of a kind the \
            gateway reads: its address, name, signal strength, kind and the source that reads \
            it. The kinds, by the service they advertise:

            \(profiles(in: BuiltinCatalog.make()).map { "  \($0.kind.name.padded(toLength: 27))\($0.kind.service)  (\($0.source))" }.joined(separator: "\n"))

            Devices that only advertise are listed too, with their last reading, for the sources \
            that read their advertisements: \(BuiltinCatalog.make().advertisementSources.map(\.kind).joined(separator: ", ")).

            --kind narrows the scan to some of them (a kind above, or a source's kind such as \
            ble-health or ble-polar-broadcast); it may be given more than once. After the table, scan prints the \
            "sources" entries that follow exactly the devices found, one per source, such as \
            {"kind": "ble-heart-rate", "config": {"devices": ["AA:BB:CC:DD:EE:FF"]}}: paste them \
            into the configuration's "sources" list.

            Devices heard through a serial device instead (--kind NAME, or the source's kind; \
            --path names the device, else every one udev tags for the source):

            \(serialScans(in: BuiltinCatalog.make()).map { "  \($0.scan.name.padded(toLength: 27))\($0.scan.summary)  (\($0.source))" }.joined(separator: "\n"))

            For those, scan lists what it heard with its id and prints the "sources" entry that \
            reads the device. --kind ant reads the ANT+ network key from ant-network-key in the \
            configuration directory (plugins/ANTHeartRate/README.md).

            Needs bluetoothd and permission to talk to it on the system bus (see \
            Sources/Devices/Bluetooth/BlueZ/README.md). DBUS_SYSTEM_BUS_ADDRESS selects another bus.

            Exits 69 when there is no Bluetooth (no bluetoothd, no adapter, adapter off), 64 for \
            an unknown --kind.
            """,
        options: [
            OptionSpec(name: "timeout", value: "SECONDS", help: "How long to scan (default 10)."),
            OptionSpec(name: "kind", value: "KIND", help: "Only devices of this kind, or of this source (repeatable).", repeatable: true),
            OptionSpec(name: "path", value: "TTY", help: "The serial device a serial scan (--kind ant) listens through."),
        ] + BluetoothCommandOptions.options
    ) { arguments, context in
        let timeout = try BluetoothCommandOptions.timeout(arguments, defaultSeconds: 10)
        let serial = serialScans(in: BuiltinCatalog.make()).filter { entry in
            arguments.list("kind").contains { $0 == entry.scan.name || $0 == entry.source }
        }
        if let first = serial.first {
            guard serial.count == arguments.list("kind").count else {
                throw CommandError(.usage, "--kind \(first.scan.name) scans through a serial device; give it alone")
            }
            for entry in serial { try await scanSerial(entry, arguments: arguments, timeout: timeout, context: context) }
            return .success
        }
        let catalog = BuiltinCatalog.make()
        let names = arguments.list("kind")
        let broadcasting = catalog.advertisementSources.filter { names.isEmpty || names.contains($0.kind) }
        let wanted = try selected(
            names.filter { name in !broadcasting.contains { $0.kind == name } }, from: profiles(in: catalog),
            broadcasting: names.isEmpty ? [] : broadcasting.map(\.kind), extraKnown: catalog.advertisementSources.map(\.kind))
        // One scan serves both lists, as the adapter's shared scan does in the gateway: one BlueZ
        // client, one StartDiscovery (two clients starting discovery at once left one of them
        // unanswered by bluetoothd 5.66, and its discovery reported nothing).
        let transport = try BluetoothCommandOptions.transport(arguments, context: context, label: "scan", level: .warning)
        let (found, heard) = try await scan(
            transport, services: wanted.map(\.kind.service), advertisers: broadcasting, for: .seconds(timeout))
        if !wanted.isEmpty || heard.isEmpty { print(found, profiles: wanted, context: context) }
        printAdvertisers(heard, path: transport.path, context: context)
        return .success
    }

    /// Runs one serial member's scan and prints what it heard and the `sources` entry.
    static func scanSerial(
        _ entry: (source: String, scan: SerialDeviceScan), arguments: ParsedArguments, timeout: Double, context: CommandContext
    ) async throws {
        let logger = Logger(label: "scan", sink: StandardErrorLogSink(variables: context.variables), level: .warning)
        let request = SerialDeviceScanRequest(
            path: arguments.value("path"), duration: .milliseconds(Int64(timeout * 1000)), variables: context.variables,
            clock: context.clock, logger: logger)
        let result: SerialDeviceScanResult
        do {
            result = try await entry.scan.run(request)
        } catch let error as PluginConfigurationError {
            throw CommandError(.configuration, "\(ConfigurationKeyPath.joining(entry.source, error.keyPath)): \(error.reason)")
        }
        guard !result.rows.isEmpty else {
            context.print("Nothing heard (\(entry.scan.summary)) in \(timeout) s.")
            return
        }
        context.print(TextTable.render(header: result.header, rows: result.rows))
        context.print("")
        context.print("To read them, add to \"sources\":")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for source in result.sources {
            context.print("  " + String(decoding: try encoder.encode(source), as: UTF8.self))
        }
    }

    /// The profiles `--kind` names (every one when none is given, and none when it names only
    /// advertisement sources, `broadcasting`).
    static func selected(
        _ given: [String], from profiles: [Profile], broadcasting: [String] = [], extraKnown: [String] = []
    ) throws(CommandError) -> [Profile] {
        guard !given.isEmpty else { return broadcasting.isEmpty ? profiles : [] }
        let known = profiles.map(\.kind.name) + Array(Set(profiles.map(\.source))).sorted() + extraKnown
        var names: [String] = []
        for name in given { names.append(try NameChoice.pick(name, among: known, what: "--kind")) }
        return profiles.filter { names.contains($0.kind.name) || names.contains($0.source) }
    }

    /// What one scan found: the peripherals of the wanted services still present at its end, by
    /// address, and each advertiser of the advertisement sources with its last reading.
    struct Scanned: Sendable {
        var found: [String: DiscoveredPeripheral] = [:]
        var heard: [String: Advertiser] = [:]
    }

    /// Runs one scan for `duration` (or until it ends early): discovery of the peripherals that
    /// advertise one of `services`, and the advertisements of `advertisers`' devices.
    static func scan(
        _ transport: BlueZTransport, services: [BluetoothUUID], advertisers: [(kind: String, source: any AdvertisementSource.Type)],
        for duration: Duration
    ) async throws -> (found: [DiscoveredPeripheral], heard: [String: Advertiser]) {
        let discovery = services.isEmpty ? nil : DiscoveryInterest(services: services)
        let interest = ScanInterest(advertisements: advertisers.isEmpty ? nil : [], discovery: discovery)
        guard interest.advertisements != nil || discovery != nil else { return ([], [:]) }
        let seen = AsyncCondition(Scanned())
        _ = try await race(sleep: { try await Task.sleep(for: duration) }) {
            do {
                // Scoped: when the time is up, discovery is stopped before the lists are printed.
                try await transport.withScan(for: interest) { events in
                    for try await event in events {
                        switch event {
                        case .discovery(.found(let peripheral)) where discovery?.accepts(peripheral) == true:
                            seen.update { $0.found[peripheral.address] = peripheral }
                        case .discovery(.lost(let address)):
                            seen.update { $0.found[address] = nil }
                        case .advertisement(let advertisement):
                            for (kind, source) in advertisers {
                                guard let reading = source.reading(in: advertisement) else { continue }
                                seen.update {
                                    $0.heard[advertisement.address] = Advertiser(advertisement: advertisement, source: kind, reading: reading)
                                }
                                break
                            }
                        case .discovery:
                            break
                        }
                    }
                }
            } catch let error as BLETransportError where error.code == .unavailable {
                throw CommandError(.unavailable, "no Bluetooth: \(error.message)")
            }
        }
        let scanned = seen.value
        return (Array(scanned.found.values), scanned.heard)
    }

    private static func print(_ peripherals: [DiscoveredPeripheral], profiles: [Profile], context: CommandContext) {
        // A device is listed under the first kind whose service it advertises.
        let matched = peripherals.compactMap { peripheral -> (DiscoveredPeripheral, Profile)? in
            guard let profile = profiles.first(where: { peripheral.serviceUUIDs.contains($0.kind.service) }) else { return nil }
            return (peripheral, profile)
        }
        guard !matched.isEmpty else {
            context.print("No \(profiles.count == 1 ? profiles[0].kind.name : "device of a kind the gateway reads") found.")
            return
        }
        let sorted = matched.sorted { ($0.0.rssi ?? -999, $1.0.address) > ($1.0.rssi ?? -999, $0.0.address) }
        let rows = sorted.map { peripheral, profile in
            [peripheral.address, peripheral.name ?? "-", peripheral.rssi.map { "\($0) dBm" } ?? "-", profile.kind.name, profile.source]
        }
        context.print(TextTable.render(header: ["ADDRESS", "NAME", "RSSI", "KIND", "SOURCE"], rows: rows))
        context.print("")
        context.print("To follow these devices, add to \"sources\":")
        var sources: [String] = []
        for (_, profile) in sorted where !sources.contains(profile.source) { sources.append(profile.source) }
        for source in sources {
            let addresses = sorted.filter { $0.1.source == source }.map { "\"\($0.0.address.uppercased())\"" }
            context.print("  {\"kind\": \"\(source)\", \"config\": {\"devices\": [\(addresses.joined(separator: ", "))]}}")
        }
    }
    /// One advertiser heard: its last advertisement and the source that reads it.
    struct Advertiser: Sendable {
        let advertisement: Advertisement
        let source: String
        let reading: String
    }

    /// Prints the advertisers heard, with the scan path that heard them (`management-socket`, …).
    private static func printAdvertisers(_ advertisers: [String: Advertiser], path: ScanPath?, context: CommandContext) {
        guard !advertisers.isEmpty else { return }
        let sorted = advertisers.values.sorted { $0.advertisement.address < $1.advertisement.address }
        context.print("")
        context.print("Advertising devices (read without a connection; scan path: \(path?.rawValue ?? "unknown")):")
        context.print(
            TextTable.render(
                header: ["ADDRESS", "NAME", "RSSI", "LAST READING", "SOURCE"],
                rows: sorted.map {
                    [
                        $0.advertisement.address, $0.advertisement.name ?? "-", $0.advertisement.rssi.map { "\($0) dBm" } ?? "-",
                        $0.reading, $0.source,
                    ]
                }))
        context.print("")
        context.print("To read these devices, add to \"sources\":")
        var sources: [String] = []
        for advertiser in sorted where !sources.contains(advertiser.source) { sources.append(advertiser.source) }
        for source in sources {
            let addresses = sorted.filter { $0.source == source }.map { "\"\($0.advertisement.address.uppercased())\"" }
            context.print("  {\"kind\": \"\(source)\", \"config\": {\"devices\": [\(addresses.joined(separator: ", "))]}}")
        }
    }
}

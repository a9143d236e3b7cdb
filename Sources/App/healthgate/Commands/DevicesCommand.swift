import BuiltinPlugins
import FoundationEssentials
import SerialDevices
import Udev
import GatewayRuntime
import HealthModel

/// `healthgate devices`: the serial (tty) devices udev knows, and whether a serial family member
/// in the catalog (``PluginCatalog/serialSources``) would use them.
enum DevicesCommand {
    static let command = Command(
        name: "devices", summary: "List serial (tty) devices udev knows and whether healthgate would use them.",
        usage: "devices [--all] [--format table|json]",
        discussion: """
            A device is used by a serial source (such as `serial-pedometer`) with "udev": true when \
            that source's rules in udev-rules/ tagged it HEALTHGATE_ADAPTER=<the source's kind> \
            (see udev-rules/README.md). The REASON column says why a device is or is not used.

            Virtual terminals (tty0…, console, ptmx) are hidden unless --all is given.

            Exits 69 when the udev database cannot be read.
            """,
        options: [
            OptionSpec(name: "all", value: nil, help: "Include virtual terminals."),
            OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json: one JSON object per line and device."),
        ]
    ) { arguments, context in
        let format = try arguments.format(among: ["table", "json"])
        let matches = BuiltinCatalog.make().serialDeviceMatches
        let devices: [UdevDevice]
        do {
            devices = try await Udev.devices(subsystem: "tty").filter { arguments.flag("all") || !$0.isVirtual }
        } catch {
            throw CommandError(.unavailable, "cannot read the udev database: \(error)")
        }
        if format == "json" {
            // HealthJSON's encoder: sorted keys, and paths such as /dev/ttyUSB0 unescaped.
            let encoder = HealthJSON.makeEncoder()
            for device in devices {
                let eligibility = SerialDeviceMatch.eligibility(of: device, among: matches)
                let row = Row(
                    devnode: device.devnode, syspath: device.syspath, usbID: device.usbID, serial: device.serial,
                    links: device.devlinks, used: eligibility.eligible, reason: eligibility.reason,
                    healthgate: device.properties.filter { $0.key.hasPrefix("HEALTHGATE_") })
                let data = try encoder.encode(row)
                context.print(String(decoding: data, as: UTF8.self))
            }
            return .success
        }
        if devices.isEmpty {
            context.print("No serial devices (udev knows no tty devices\(arguments.flag("all") ? "" : " other than virtual terminals")).")
            return .success
        }
        let rows = devices.map { device -> [String] in
            let eligibility = SerialDeviceMatch.eligibility(of: device, among: matches)
            return [
                device.devnode ?? device.sysname, device.usbID ?? "-", device.serial ?? "-", eligibility.eligible ? "yes" : "no",
                eligibility.reason,
            ]
        }
        let header = ["DEVICE", "USB ID", "ID_SERIAL", "USED", "REASON"]
        let widths = (0..<header.count - 1).map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        for row in [header] + rows {
            var line = ""
            for (column, cell) in row.enumerated() {
                line += column < widths.count ? cell.padded(toLength: widths[column] + 2) : cell
            }
            context.print(line)
        }
        if !FileManager.default.fileExists(atPath: "/run/udev/data") {
            context.printError("note: /run/udev/data is missing (udevd not running?): properties such as ID_SERIAL and HEALTHGATE_ADAPTER are unknown")
        }
        return .success
    }

    private struct Row: Encodable {
        var devnode: String?
        var syspath: String
        var usbID: String?
        var serial: String?
        var links: [String]
        var used: Bool
        var reason: String
        var healthgate: [String: String]
    }
}

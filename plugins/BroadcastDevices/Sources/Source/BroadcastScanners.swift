import BLEAdvertisementKit
import FoundationEssentials
import BLETransport
import GatewayRuntime
import HealthModel

/// The scanner a broadcast source's settings choose, and its device filter.
enum BroadcastScanners {
    /// The scanner `settings` choose: the adapter's (from the gateway's `bluetooth`), or the
    /// simulated advertisers made by `make`.
    static func scanner(
        _ settings: BroadcastSourceSettings, bluetooth: BluetoothAdapters, clock: any GatewayClock,
        make: @escaping @Sendable (Int, Int, FoundationEssentials.Date) -> Advertisement
    ) -> any AdvertisementScanner {
        guard settings.transport == .simulated else { return bluetooth.scanner(for: settings.adapter) }
        return SimulatedAdvertisementScanner(
            devices: settings.simulation.devices, advertisementsPerSecond: settings.simulation.advertisementsPerSecond,
            clock: clock, make: make)
    }

    /// Whether `identity` is one of `devices` (a device id or address in any form
    /// ``DeviceIdentity`` reads, or a glob on the advertised name); every device when `devices`
    /// is nil.
    static func accepts(_ devices: [String]?) -> @Sendable (DeviceIdentity, Advertisement) -> Bool {
        guard let devices else { return { _, _ in true } }
        let entries = devices.map { (identity: DeviceIdentity($0), name: AdvertisementMatch.name($0)) }
        return { identity, advertisement in
            entries.contains { entry in
                entry.identity == identity || entry.identity == advertisement.addressIdentity || entry.name.matches(advertisement)
            }
        }
    }
}

import BLEAdvertisementKit
import BLETransport
import FoundationEssentials
import GatewayRuntime
import HealthModel
import SampleBus

/// What a broadcast source listens with, the same for every profile: its checked settings, the
/// sample ids, the gateway's Bluetooth adapters and, in tests, a scripted scanner in their place.
/// The source supplies only what a reading becomes.
struct BroadcastReception: Sendable {
    let settings: BroadcastSourceSettings
    let ids: SampleIDGenerator
    let bluetooth: BluetoothAdapters
    /// A scripted scanner (tests); nil: the one the settings choose.
    let scanner: (any AdvertisementScanner)?

    /// Reception on the gateway's Bluetooth adapters (the executable's, shared by every source).
    init(settings: BroadcastSourceSettings, environment: PluginEnvironment, bluetooth: BluetoothAdapters) {
        self.settings = settings
        ids = environment.ids
        self.bluetooth = bluetooth
        scanner = nil
    }

    /// Reception on `scanner` (tests: a scripted scanner).
    init(settings: BroadcastSourceSettings, ids: SampleIDGenerator, scanner: any AdvertisementScanner) {
        self.settings = settings
        self.ids = ids
        bluetooth = BluetoothAdapters(clock: SystemClock())
        self.scanner = scanner
    }

    /// The listener for `Profile`'s advertisements from the devices the settings select: on the
    /// scripted scanner, else on the scanner the settings choose (simulated advertisers made by
    /// `simulated`, or the adapter's).
    func listener<Profile: AdvertisementProfile>(
        _ profile: Profile.Type, clock: any GatewayClock,
        simulated: @escaping @Sendable (Int, Int, FoundationEssentials.Date) -> Advertisement
    ) -> AdvertisementListener<Profile> {
        let scanner = self.scanner ?? BroadcastScanners.scanner(settings, bluetooth: bluetooth, clock: clock, make: simulated)
        return AdvertisementListener<Profile>(scanner: scanner, accepts: BroadcastScanners.accepts(settings.devices))
    }
}

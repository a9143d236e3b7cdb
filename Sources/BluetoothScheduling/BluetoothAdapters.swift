public import GatewayRuntime
import Synchronization

/// The gateway's Bluetooth adapters: one ``AdapterScheduler`` per adapter, every one with the
/// limits of the gateway's `bluetooth.adapterLimits`, shared by all the Bluetooth LE sources
/// that use the adapter, whichever plugin they belong to (BlueZ answers InProgress to a second
/// connection attempt, and a dongle holds only so many links).
///
/// The executable makes one per run and hands it to every plugin in its ``PluginEnvironment``;
/// a test makes its own. The limits are the gateway's, so no source can set them for another.
public final class BluetoothAdapters: Sendable {
    /// The limits every adapter's scheduler has.
    public let limits: AdapterScheduler.Limits
    private let clock: any GatewayClock
    private let schedulers = Mutex<[String: AdapterScheduler]>([:])

    public init(limits: AdapterScheduler.Limits = AdapterScheduler.Limits(), clock: any GatewayClock) {
        self.limits = limits
        self.clock = clock
    }

    /// The scheduler of `adapter` (nil: the adapter BlueZ lists first, `default`), made on the
    /// first request and the same for every later one.
    public func scheduler(for adapter: String?) -> AdapterScheduler {
        let name = adapter ?? "default"
        return schedulers.withLock { schedulers in
            if let existing = schedulers[name] { return existing }
            let made = AdapterScheduler(adapter: name, limits: limits, clock: clock)
            schedulers[name] = made
            return made
        }
    }
}

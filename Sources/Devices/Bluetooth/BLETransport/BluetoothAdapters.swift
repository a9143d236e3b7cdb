public import GatewayRuntime
import Synchronization

/// The gateway's Bluetooth adapters: the stack that reaches them, and one ``AdapterScheduler``
/// per adapter with the limits of the gateway's `bluetooth.adapterLimits`, shared by every
/// Bluetooth LE source that uses the adapter, whichever plugin it belongs to (BlueZ answers
/// InProgress to a second connection attempt, and a dongle holds only so many links).
///
/// The executable makes one per run with the BlueZ transport and hands it to every plugin in its
/// `PluginEnvironment`; a test makes one with a scripted transport. The limits are the
/// gateway's, so no source can set them for another.
public final class BluetoothAdapters: Sendable {
    /// Makes the transport of one adapter (nil: the adapter the stack lists first).
    public typealias MakeTransport = @Sendable (_ adapter: String?) -> any BLECentralTransport
    /// Lists the stack's adapters by name (`hci0`), in its order; throws ``BLETransportError``
    /// `.unavailable` when there is no stack.
    public typealias ListAdapters = @Sendable () async throws -> [String]

    /// The limits every adapter's scheduler has.
    public let limits: AdapterScheduler.Limits
    /// Whether the sources watch each adapter for a wedged controller and power-cycle it
    /// (``AdapterScheduler``'s watchdog): true for real adapters, false for a scripted stack.
    public let watchdog: Bool
    /// The adapters of the sources that name none (the gateway's `bluetooth.adapters`); nil:
    /// the adapter the stack lists first.
    public let defaultAdapters: AdapterSelection?
    private let listAdapters: ListAdapters
    private let clock: any GatewayClock
    private let makeTransport: MakeTransport
    private let schedulers = Mutex<[String: AdapterScheduler]>([:])
    /// Each adapter's stack transport and its one scan, made on first use.
    private let stacks = Mutex<[String: Stack]>([:])

    /// One adapter's transport from the stack, and the scan every source shares on it.
    private struct Stack {
        let transport: any BLECentralTransport
        let scanner: SharedAdvertisementScanner
        /// Whether discovery goes through the scan: false when the stack does not scan (a
        /// scripted stack's transport discovers by itself).
        let scans: Bool
    }

    /// - Parameters:
    ///   - transport: the stack; without one, every adapter reports `.unavailable` (no Bluetooth
    ///     stack was given to this gateway), as BlueZ does on a machine without Bluetooth.
    ///   - watchdog: whether the sources watch the adapters (see ``watchdog``).
    ///   - adapters: the gateway's `bluetooth.adapters` (see ``defaultAdapters``).
    ///   - listAdapters: the stack's adapters, for `all`; without it, `all` finds none.
    public init(
        limits: AdapterScheduler.Limits = AdapterScheduler.Limits(), clock: any GatewayClock,
        transport: MakeTransport? = nil, watchdog: Bool = true, adapters: AdapterSelection? = nil,
        listAdapters: ListAdapters? = nil
    ) {
        self.limits = limits
        self.clock = clock
        self.watchdog = watchdog
        defaultAdapters = adapters
        self.listAdapters = listAdapters ?? { [] }
        makeTransport = transport ?? { adapter in UnavailableTransport(adapter: adapter) }
    }

    /// The adapters a source uses, by name (nil: the adapter the stack lists first): its own
    /// `selection`, else the gateway's ``defaultAdapters``, else the first adapter. `all` asks
    /// the stack now; when it lists none or cannot be reached, the first adapter stands in, whose
    /// discovery then reports what is missing (and retries) like any source's.
    public func resolve(_ selection: AdapterSelection?) async -> [String?] {
        switch selection ?? defaultAdapters {
        case nil: return [nil]
        case .named(let names)?: return names.isEmpty ? [nil] : names
        case .all?:
            let names = (try? await listAdapters()) ?? []
            return names.isEmpty ? [nil] : names
        }
    }

    /// The scheduler of `adapter` (nil: the adapter the stack lists first, `default`), made on
    /// the first request and the same for every later one.
    public func scheduler(for adapter: String?) -> AdapterScheduler {
        let name = adapter ?? "default"
        return schedulers.withLock { schedulers in
            if let existing = schedulers[name] { return existing }
            let made = AdapterScheduler(adapter: name, limits: limits, clock: clock)
            schedulers[name] = made
            return made
        }
    }

    /// The transport of `adapter` (nil: the adapter the stack lists first), the same for every
    /// source: the stack's transport, made on the first request. Where the stack scans (BlueZ
    /// does), its discovery joins the adapter's one scan (``scanner(for:)``), so that the
    /// connection-based sources and the advertisement sources on an adapter share one scan,
    /// which starts with the first of them and stops with the last. Nothing is opened here; a
    /// missing stack or adapter is reported by discovery and connect.
    public func transport(for adapter: String?) -> any BLECentralTransport {
        let stack = stack(for: adapter)
        guard stack.scans else { return stack.transport }
        return SharedScanTransport(stack: stack.transport, scanner: stack.scanner)
    }

    /// The advertisement scanner of `adapter` (nil: the adapter the stack lists first), the same
    /// for every source: one scan per adapter, shared (``SharedAdvertisementScanner``) with the
    /// connection-based sources' discovery, of the stack's transport when it scans advertisements
    /// (BlueZ does), else one that fails with `.unavailable`. Nothing is opened here.
    public func scanner(for adapter: String?) -> any AdvertisementScanner {
        stack(for: adapter).scanner
    }

    private func stack(for adapter: String?) -> Stack {
        stacks.withLock { stacks in
            let name = adapter ?? "default"
            if let existing = stacks[name] { return existing }
            let transport = makeTransport(adapter)
            let scanning = transport as? any AdvertisementScanner
            let made = Stack(
                transport: transport, scanner: SharedAdvertisementScanner(scanning ?? UnavailableTransport(adapter: adapter)),
                scans: scanning != nil)
            stacks[name] = made
            return made
        }
    }
}

/// The transport of a gateway given no Bluetooth stack: discovery and connect fail with
/// `.unavailable`, which a source reports and retries.
struct UnavailableTransport: BLECentralTransport {
    let adapter: String?

    private var error: BLETransportError {
        BLETransportError(.unavailable, "no Bluetooth stack was given to this gateway (adapter \(adapter ?? "default"))")
    }

    func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        AsyncThrowingStream { $0.finish(throwing: error) }
    }

    func connect(to address: String) async throws -> any BLEConnection {
        throw error
    }
}

extension UnavailableTransport: AdvertisementScanner {
    var path: ScanPath? { nil }

    func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
        AsyncThrowingStream { $0.finish(throwing: error) }
    }
}

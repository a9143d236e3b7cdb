public import BLETransport
import AsyncPrimitives
public import DBus
public import GatewayRuntime
import Synchronization

/// The Bluetooth LE central transport over bluetoothd's D-Bus API.
///
/// Discovery and advertisement scanning are one scan (``runScan(for:widenedBy:report:)``, the only
/// code that calls SetDiscoveryFilter, StartDiscovery and StopDiscovery): Adapter1
/// SetDiscoveryFilter (LE, the service UUIDs) and StartDiscovery, reporting Device1 objects as
/// they appear, change and vanish. Because BlueZ merges the filters of all its clients, devices
/// are filtered again by their advertised UUIDs. The gateway runs one scan per adapter for all
/// its sources (``BluetoothAdapters/transport(for:)``).
/// Connecting calls Device1.Connect and waits for a verified ServicesResolved: the property is
/// true AND GattService1 objects are exported below the device.
///
/// Every failure is a ``BLETransportError``; `CancellationError` passes through.
public final class BlueZTransport: BLECentralTransport {
    private let busAddress: String?
    /// The bus connection, opened on first use and again after the bus dropped it, so that a
    /// gateway started before dbus or bluetoothd recovers (the source retries `.unavailable`).
    private let bus: Mutex<DBusConnection?>
    let adapterName: String?
    /// Stamps notifications as they arrive.
    let clock: any GatewayClock
    let logger: Logger
    /// How long to wait for ServicesResolved after Device1.Connect returned.
    let resolveTimeout: Duration
    /// Our running scans' discovery (adapter path and filter), paused while connecting.
    let discoveries = Mutex<[UInt64: (adapter: String, filter: DiscoveryFilter)]>([:])
    let nextDiscovery = Atomic<UInt64>(0)
    /// The pairings under way, which the agent answers for.
    private let pairings = PairingsUnderWay()
    /// The connection our pairing agent is registered on (bluetoothd forgets the agent when the
    /// connection closes, so a new connection registers it again).
    private let agentConnection = Mutex<ObjectIdentifier?>(nil)
    /// The path the latest advertisement scan uses (``AdvertisementScanner/path``).
    let advertisementScanPath = Mutex<ScanPath?>(nil)
    /// Advertisements heard but dropped before a scan reported them, over every scan
    /// (``AdvertisementScanner/droppedAdvertisements``).
    let droppedScanAdvertisements = Atomic<Int>(0)
    /// Numbers our advertisement monitor applications, one per scan.
    let nextMonitorApplication = Atomic<UInt64>(0)
    /// Whether advertisement scans may read the kernel's management socket.
    let managementSocket: ManagementSocketAccess

    /// A transport on the system bus, or on `busAddress` (`unix:path=…`) when given.
    ///
    /// `adapter` names the controller (`hci1`); nil uses the first adapter BlueZ exports.
    /// Nothing is opened yet: when the bus cannot be reached, discovery and connect throw
    /// ``BLETransportError`` `.unavailable`. `managementSocket` says whether advertisement scans
    /// may read the kernel's management socket (the gateway gives ``ManagementSocketAccess/kernel``
    /// on the system bus).
    public convenience init(
        busAddress: String?, adapter: String?, clock: any GatewayClock, logger: Logger,
        resolveTimeout: Duration = .seconds(30), managementSocket: ManagementSocketAccess = .disabled
    ) {
        self.init(
            busAddress: busAddress, connection: nil, adapter: adapter, clock: clock, logger: logger,
            resolveTimeout: resolveTimeout, managementSocket: managementSocket)
    }

    /// Uses an open connection (tests share one bus connection).
    public convenience init(
        connection: DBusConnection, adapter: String?, clock: any GatewayClock, logger: Logger,
        resolveTimeout: Duration = .seconds(30), managementSocket: ManagementSocketAccess = .disabled
    ) {
        self.init(
            busAddress: nil, connection: connection, adapter: adapter, clock: clock, logger: logger,
            resolveTimeout: resolveTimeout, managementSocket: managementSocket)
    }

    private init(
        busAddress: String?, connection: DBusConnection?, adapter: String?, clock: any GatewayClock, logger: Logger,
        resolveTimeout: Duration, managementSocket: ManagementSocketAccess
    ) {
        self.busAddress = busAddress
        self.managementSocket = managementSocket
        bus = Mutex(connection)
        adapterName = adapter
        self.clock = clock
        self.logger = logger
        self.resolveTimeout = resolveTimeout
    }

    /// The client over the current connection, opening one when there is none or it dropped.
    ///
    /// The connection is opened outside the lock, off the cooperative pool; when two tasks open
    /// one at once, the first stored wins and the other is closed.
    func client() async throws -> BlueZClient {
        if let current = bus.withLock({ $0 }), current.isOpen { return BlueZClient(connection: current) }
        let opened: DBusConnection
        do {
            opened = try await DBusConnection.open(address: busAddress)
        } catch {
            // A missing or refusing bus is named with its fix; anything else (libsystemd
            // missing, whose message names the package) is passed on as it was reported.
            throw BluetoothAbsence.meaning(of: error, address: busAddress)?.error
                ?? BLETransportError(.unavailable, "cannot reach the D-Bus system bus: \(error)")
        }
        let chosen = bus.withLock { current -> DBusConnection in
            if let current, current.isOpen { return current }
            current = opened
            return opened
        }
        if chosen !== opened { opened.close() }
        return BlueZClient(connection: chosen)
    }

    /// The adapters BlueZ has, by name (`hci0`), in its order: what `"adapters": "all"` uses.
    /// Throws ``BLETransportError`` `.unavailable` when BlueZ cannot be reached.
    public func adapterNames() async throws -> [String] {
        let tree = try await client().managedObjects()
        return tree.adapterPaths.compactMap { $0.split(separator: "/").last.map(String.init) }
    }

    /// The adapter's object path in `tree`, or `.unavailable` naming what is missing.
    /// The device BlueZ knows by `address` (any case) on `adapter`, or nil.
    private func device(_ address: String, in tree: BlueZObjectTree, adapter: String) -> BlueZDevice? {
        tree.devices(adapter: adapter).first { $0.address.uppercased() == address.uppercased() }
    }

    func adapterPath(in tree: BlueZObjectTree) throws -> String {
        let path: String
        if let adapterName {
            path = "/org/bluez/\(adapterName)"
            guard tree.objects[path]?[BlueZInterface.adapter] != nil else {
                throw BluetoothAbsence.noAdapter(adapterName).error
            }
        } else {
            guard let first = tree.adapterPaths.first else {
                throw BluetoothAbsence.noAdapter(nil).error
            }
            path = first
        }
        if tree.objects[path]?[BlueZInterface.adapter]?["Powered"]?.bool == false {
            throw BluetoothAbsence.adapterOff(String(path.split(separator: "/").last ?? "")).error
        }
        return path
    }

    /// Powers the adapter off and on through Adapter1.Powered, half a second apart.
    public func powerCycleAdapter() async throws {
        let client = try await client()
        let adapter = try adapterPath(in: try await client.managedObjects())
        do {
            try await client.setPowered(adapter: adapter, false)
            try await clock.sleep(for: .milliseconds(500))
            try await client.setPowered(adapter: adapter, true)
        } catch let error as DBusError {
            throw BLETransportError(.failed, "power-cycling \(adapter): \(error)")
        }
    }

    // MARK: Discovery

    /// Discovers LE peripherals advertising any of `services` on the adapter (see the type's
    /// documentation). Throws `.unavailable` without bluetoothd, adapter or power; ends when
    /// the consumer stops iterating, after which discovery is stopped.
    public func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        discover(services: services, addresses: [])
    }

    /// Discovers like ``discover(services:)`` and reports the devices at `addresses` too: one
    /// scan of this transport with a discovery interest (``withScan(for:_:)``), its devices
    /// filtered here (``DiscoveryInterest/accepts(_:)``). With addresses, the adapter's discovery
    /// filter names no services (the kernel would drop the advertisements of a device that does
    /// not list them). In the gateway the sources discover through the adapter's shared scan
    /// instead (``BluetoothAdapters/transport(for:)``), which runs one such scan for all of them.
    public func discover(services: [BluetoothUUID], addresses: Set<String>) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        let interest = DiscoveryInterest(services: services, addresses: addresses)
        // The addresses told found, so that a lost device is reported to this consumer only
        // when it was told of it; the relay runs in the scan's task, one event at a time.
        let reported = Mutex<Set<String>>([])
        // Bounded: discovery events are state updates; if the consumer falls behind, the newest
        // state of each device is what matters.
        return startScan(for: ScanInterest(discovery: interest), bufferingNewest: 512) { (event: ScanEvent, continuation) in
            switch event {
            case .discovery(.found(let peripheral)) where interest.accepts(peripheral):
                reported.withLock { _ = $0.insert(peripheral.address.uppercased()) }
                continuation.yield(.found(peripheral))
            case .discovery(.lost(let address)) where reported.withLock({ $0.remove(address.uppercased()) != nil }):
                continuation.yield(.lost(address: address))
            default:
                break
            }
        }.stream
    }

    // MARK: Connecting

    /// Connects to the device BlueZ knows by `address` on the adapter and waits for its services
    /// (``resolveTimeout``). Throws `.notFound`, `.inProgress`, `.connectFailed` or
    /// `.unavailable`; the returned connection ends when the link drops.
    public func connect(to address: String) async throws -> any BLEConnection {
        do {
            let client = try await client()
            let known = try await client.managedObjects()
            let adapter = try adapterPath(in: known)
            guard let path = device(address, in: known, adapter: adapter)?.path else {
                throw BLETransportError(.notFound, device: address, "BlueZ does not know this device on \(adapter)")
            }
            // The device's own signals only, subscribed before the state they apply to is read.
            let signals = try await client.signals(about: path)
            let tree = try await client.managedObjects()
            guard let device = device(address, in: tree, adapter: adapter), device.path == path else {
                throw BLETransportError(.notFound, device: address, "BlueZ removed this device from \(adapter) as the connection began")
            }
            let version = BlueZVersion(modalias: tree.objects[adapter]?[BlueZInterface.adapter]?["Modalias"]?.string)
            if !version.acquireNotifyIsSafe {
                logger.debug("notifications through StartNotify: \(version)", device: address)
            }
            let peripheral = BlueZPeripheral(
                client: client, address: address, devicePath: device.path, tree: tree,
                acquireNotify: version.acquireNotifyIsSafe, clock: clock, logger: logger)
            peripheral.startMonitoring(signals)
            do {
                // Scanning while the controller initiates a connection slowed or stalled LE
                // connections in the device lab; our own discovery pauses for the attempt.
                let paused = await pauseDiscovery(on: adapter, client: client, device: address)
                do {
                    do {
                        try await client.connect(device: device.path)
                    } catch let error as DBusError where error.name == DBusError.bluezAlreadyConnected {
                        logger.debug("already connected", device: address)
                    }
                } catch {
                    await resumeDiscovery(paused, on: adapter, client: client, device: address)
                    throw error
                }
                // StartDiscovery can take BlueZ seconds to answer after a connection (3.9 s of a
                // 5.5 s reconnect in one measurement); the services are resolved meanwhile, so the
                // connection goes on to subscribe while discovery resumes beside it.
                if paused != nil {
                    Task { [self] in await resumeDiscovery(paused, on: adapter, client: client, device: address) }
                }
                try await peripheral.waitUntilResolved(timeout: resolveTimeout)
            } catch {
                peripheral.finish(BLETransportError(.disconnected, device: address, "connect failed"))
                throw error
            }
            logger.info("connected, services resolved", device: address)
            return peripheral
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .connect)
        }
    }

    /// Connects, then pairs when `pairing` is set and BlueZ holds no bond with the device.
    public func connect(to address: String, pairing: DevicePairing?) async throws -> any BLEConnection {
        let connection = try await connect(to: address)
        guard let pairing else { return connection }
        do {
            try await pair(address: address, pairing: pairing, prompt: nil)
        } catch {
            await connection.disconnect()
            throw error
        }
        return connection
    }

    /// Pairs with the device at `address` unless BlueZ already holds a bond with it, through our
    /// agent (``PairingAgent``; `prompt` asks for a passkey the configuration does not give),
    /// then marks it trusted. BlueZ stores the keys; nothing is kept here. Device1.Pair connects
    /// by itself when the device is not connected. Returns whether a pairing took place.
    ///
    /// Throws `.notFound` when BlueZ does not know the device, `.pairingFailed` when pairing
    /// fails or is refused.
    @discardableResult
    public func pair(address: String, pairing: DevicePairing, prompt: PasskeyPrompt?) async throws -> Bool {
        do {
            let client = try await client()
            let tree = try await client.managedObjects()
            let adapter = try adapterPath(in: tree)
            guard let device = device(address, in: tree, adapter: adapter)
            else {
                throw BLETransportError(.notFound, device: address, "BlueZ does not know this device on \(adapter)")
            }
            if device.paired {
                logger.debug("already paired (BlueZ holds the bond)", device: address)
                return false
            }
            try await registerAgent(on: client)
            pairings.begin(address, PairingsUnderWay.Request(pairing: pairing, prompt: prompt))
            defer { pairings.end(address) }
            logger.info("pairing" + (pairing.passkey == nil ? "" : " with the configured passkey"), device: address)
            do {
                try await client.pair(device: device.path)
            } catch let error where error is CancellationError || (error as? DBusError)?.name == DBusError.noReply {
                // Given up on (the gateway stopping, or no answer in time): bluetoothd would
                // otherwise go on pairing for a caller that left. A task of its own, awaited, as
                // the caller may be a cancelled task.
                let request = Task { [logger] in
                    do {
                        try await client.cancelPairing(device: device.path)
                    } catch {
                        logger.debug("CancelPairing: \(error)", device: address)
                    }
                }
                await request.value
                throw error
            } catch let error as DBusError where error.name == DBusError.bluezAlreadyExists {
                logger.debug("BlueZ reports the device already paired", device: address)
            } catch let error as DBusError where !error.isUnavailable {
                throw BLETransportError(
                    .pairingFailed, device: address,
                    "pairing failed (\(error.name)): \(error.message.isEmpty ? "no reason given" : error.message); "
                        + "check the passkey and that the device is in pairing mode")
            }
            try await client.setTrusted(device: device.path, true)
            logger.notice("paired; BlueZ keeps the bond", device: address)
            return true
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .connect)
        }
    }

    /// Waits until BlueZ knows the device at `address` on the adapter, discovering LE devices of
    /// any service meanwhile (a device to pair may not advertise the services a source filters
    /// on). Returns false when `timeout` passed without seeing it.
    public func find(address: String, timeout: Duration) async throws -> Bool {
        let wanted = address.uppercased()
        do {
            let client = try await client()
            let tree = try await client.managedObjects()
            let adapter = try adapterPath(in: tree)
            if tree.devices(adapter: adapter).contains(where: { $0.address.uppercased() == wanted }) { return true }
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .discover)
        }
        // One scan for this address whatever it advertises (the filter then names no services).
        let outcome = try await race(sleep: { [clock] in try await clock.sleep(for: timeout) }) { [self] in
            for try await event in discover(services: [], addresses: [wanted]) {
                if case .found(let peripheral) = event, peripheral.address.uppercased() == wanted { return true }
            }
            return false
        }
        if case .event(let found) = outcome { return found }
        return false
    }

    /// Removes the device and its bond from BlueZ (Adapter1.RemoveDevice). Returns false when
    /// BlueZ did not know it.
    public func forget(address: String) async throws -> Bool {
        do {
            let client = try await client()
            let tree = try await client.managedObjects()
            let adapter = try adapterPath(in: tree)
            guard let device = device(address, in: tree, adapter: adapter)
            else { return false }
            try await client.removeDevice(adapter: adapter, device: device.path)
            logger.notice("BlueZ removed the device and its bond", device: address)
            return true
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .connect)
        }
    }

    /// Exports and registers our pairing agent on `client`'s connection, once per connection.
    private func registerAgent(on client: BlueZClient) async throws {
        let id = ObjectIdentifier(client.connection)
        guard agentConnection.withLock({ $0 != id }) else { return }
        let calls = try await client.connection.export(path: PairingAgent.path)
        do {
            try await client.registerAgent(path: PairingAgent.path, capability: PairingAgent.capability)
        } catch let error as DBusError where error.name == DBusError.bluezAlreadyExists {
            logger.debug("pairing agent already registered")
        }
        agentConnection.withLock { $0 = id }
        let agent = PairingAgent(pairings: pairings, logger: logger)
        // Runs as long as the connection: the stream ends when the bus closes.
        Task { await agent.serve(calls) }
    }

    /// Stops discovery on `adapter` when one of our scans discovers there; returns its filter.
    private func pauseDiscovery(on adapter: String, client: BlueZClient, device: String) async -> DiscoveryFilter? {
        guard let filter = discoveries.withLock({ $0.values.first { $0.adapter == adapter }?.filter }) else { return nil }
        do {
            try await client.stopDiscovery(adapter: adapter)
            logger.debug("discovery paused for the connection attempt", device: device)
            return filter
        } catch {
            logger.debug("StopDiscovery before connecting: \(error)", device: device)
            return nil
        }
    }

    /// Restarts a paused discovery if a scan still wants it: its filter now (a scan widened
    /// during the attempt set a wider one) is set again.
    private func resumeDiscovery(_ paused: DiscoveryFilter?, on adapter: String, client: BlueZClient, device: String) async {
        guard paused != nil, let filter = discoveries.withLock({ $0.values.first { $0.adapter == adapter }?.filter }) else { return }
        do {
            try await filter.set(on: client, adapter: adapter)
            try await client.startDiscovery(adapter: adapter)
        } catch {
            logger.warning("cannot resume discovery on \(adapter): \(error)", device: device)
        }
    }
}

/// The discovery filter a scan sets on its adapter (Adapter1.SetDiscoveryFilter).
enum DiscoveryFilter: Sendable, Hashable {
    /// For connection-based sources: LE devices advertising these services (128-bit strings;
    /// none: every LE device), `DuplicateData` false.
    case services([String])
    /// For advertisement sources without a monitor: every LE advertiser, `DuplicateData` true.
    case advertisements

    /// Sets the filter on `adapter`.
    func set(on client: BlueZClient, adapter: String) async throws {
        switch self {
        case .services(let uuids): try await client.setDiscoveryFilter(adapter: adapter, uuids: uuids)
        case .advertisements: try await client.setAdvertisementDiscoveryFilter(adapter: adapter)
        }
    }
}

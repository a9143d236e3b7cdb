public import BLETransport
import AsyncPrimitives
public import DBus
public import GatewayRuntime
import Synchronization

/// The Bluetooth LE central transport over bluetoothd's D-Bus API.
///
/// Discovery uses Adapter1.SetDiscoveryFilter (LE, our service UUIDs) and StartDiscovery and
/// reports Device1 objects as they appear, change and vanish. Because BlueZ merges the filters
/// of all its clients, devices are filtered again here by their advertised UUIDs.
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
    /// Our running discovery sessions (adapter path and filter), paused while connecting.
    private let discoveries = Mutex<[UInt64: (adapter: String, uuids: [String])]>([:])
    private let nextDiscovery = Atomic<UInt64>(0)
    /// The pairings under way, which the agent answers for.
    private let pairings = PairingsUnderWay()
    /// The connection our pairing agent is registered on (bluetoothd forgets the agent when the
    /// connection closes, so a new connection registers it again).
    private let agentConnection = Mutex<ObjectIdentifier?>(nil)
    /// The path the latest advertisement scan uses (``AdvertisementScanner/path``).
    let advertisementScanPath = Mutex<ScanPath?>(nil)
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
    public init(
        busAddress: String?, adapter: String?, clock: any GatewayClock, logger: Logger,
        resolveTimeout: Duration = .seconds(30), managementSocket: ManagementSocketAccess = .disabled
    ) {
        self.busAddress = busAddress
        self.managementSocket = managementSocket
        bus = Mutex(nil)
        adapterName = adapter
        self.clock = clock
        self.logger = logger
        self.resolveTimeout = resolveTimeout
    }

    /// Uses an open connection (tests share one bus connection).
    public init(
        connection: DBusConnection, adapter: String?, clock: any GatewayClock, logger: Logger,
        resolveTimeout: Duration = .seconds(30), managementSocket: ManagementSocketAccess = .disabled
    ) {
        busAddress = nil
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

    /// Discovers like ``discover(services:)`` and reports the devices at `addresses` too. With
    /// addresses, the adapter's discovery filter names no services (the kernel would drop the
    /// advertisements of a device that does not list them); every device is then checked here.
    public func discover(services: [BluetoothUUID], addresses: Set<String>) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        // Bounded: discovery events are state updates; if the consumer falls behind, the newest
        // state of each device is what matters.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: DiscoveryEvent.self, bufferingPolicy: .bufferingNewest(512))
        // An unstructured task because the protocol returns a stream synchronously; it is
        // cancelled when the consumer stops iterating, and events are yielded in bus order.
        let task = Task { [self] in
            do {
                try await runDiscovery(services: services, addresses: addresses, into: continuation)
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: BLETransportError.mapping(error, device: nil, during: .discover))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func runDiscovery(
        services: [BluetoothUUID], addresses: Set<String>,
        into continuation: AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation
    ) async throws {
        let client = try await client()
        let signals = try await client.signals()
        var tree = try await client.managedObjects()
        let adapter = try adapterPath(in: tree)
        let wanted = Set(services.map(\.uuidString))
        let filter = addresses.isEmpty ? services.map(\.uuidString) : []
        try await client.setDiscoveryFilter(adapter: adapter, uuids: filter)
        do {
            try await client.startDiscovery(adapter: adapter)
        } catch let error as DBusError where error.name == DBusError.bluezInProgress {
            // This client already runs a discovery session on the adapter: keep using it.
            logger.debug("discovery already running on \(adapter)")
        }
        logger.info("discovering on \(adapter) for \(services.map(\.description).joined(separator: ", "))")
        let session = nextDiscovery.add(1, ordering: .relaxed).newValue
        discoveries.withLock { $0[session] = (adapter, filter) }
        defer {
            discoveries.withLock { _ = $0.removeValue(forKey: session) }
            // Stopping needs a bus round trip after our task was cancelled, so it runs in its own task.
            Task { [client, logger] in
                do {
                    try await client.stopDiscovery(adapter: adapter)
                } catch {
                    logger.debug("StopDiscovery on \(adapter): \(error)")
                }
            }
        }

        var reported: [String: String] = [:]  // path → address
        func report(_ device: BlueZDevice) {
            guard device.adapterPath == adapter,
                !wanted.isDisjoint(with: device.uuids) || addresses.contains(device.address.uppercased())
            else { return }
            reported[device.path] = device.address
            continuation.yield(
                .found(
                    DiscoveredPeripheral(
                        address: device.address, name: device.alias ?? device.name, rssi: device.rssi,
                        serviceUUIDs: device.uuids.compactMap { BluetoothUUID(string: $0) })))
        }
        for device in tree.devices(adapter: adapter) { report(device) }

        for try await signal in signals {
            tree.apply(signal)
            if let added = signal.interfacesAdded, let properties = added.interfaces[BlueZInterface.device] {
                report(BlueZDevice(path: added.path, properties: properties))
            } else if let removed = signal.interfacesRemoved {
                if removed.interfaces.contains(BlueZInterface.device), let address = reported.removeValue(forKey: removed.path) {
                    continuation.yield(.lost(address: address))
                }
                if removed.path == adapter, removed.interfaces.contains(BlueZInterface.adapter) {
                    throw BLETransportError(.unavailable, "Bluetooth adapter \(adapter) was removed")
                }
            } else if let change = signal.propertiesChanged, change.interface == BlueZInterface.device,
                let properties = tree.objects[signal.path]?[BlueZInterface.device],
                !Set(change.changed.keys).isDisjoint(with: ["RSSI", "Name", "Alias", "UUIDs"])
            {
                report(BlueZDevice(path: signal.path, properties: properties))
            } else if let change = signal.propertiesChanged, change.interface == BlueZInterface.adapter,
                signal.path == adapter, change.changed["Powered"]?.bool == false
            {
                throw BLETransportError(.unavailable, "Bluetooth adapter \(adapter) was powered off")
            }
        }
        // The stream ends without an error only when our task was cancelled.
        try Task.checkCancellation()
        throw BLETransportError(.unavailable, "the bus connection ended")
    }

    /// The devices BlueZ holds on the adapter now that advertise one of `services` and were made
    /// by discovery (not paired: BlueZ removes such a device some time after it was last seen).
    /// A scan reads them at its end beside the discovery events: btvirt and some controllers
    /// answer a scan start with one report at once, which a discovery client can miss (the device
    /// lab saw the device made, InterfacesAdded on the bus, and no event reach the scan).
    public func discoveredDevices(services: [BluetoothUUID]) async throws -> [DiscoveredPeripheral] {
        let client = try await client()
        let tree = try await client.managedObjects()
        let adapter = try adapterPath(in: tree)
        let wanted = Set(services.map(\.uuidString))
        return tree.devices(adapter: adapter).filter { !$0.paired && !wanted.isDisjoint(with: $0.uuids) }.map { device in
            DiscoveredPeripheral(
                address: device.address, name: device.alias ?? device.name, rssi: device.rssi,
                serviceUUIDs: device.uuids.compactMap { BluetoothUUID(string: $0) })
        }
    }

    // MARK: Connecting

    /// Connects to the device BlueZ knows by `address` on the adapter and waits for its services
    /// (``resolveTimeout``). Throws `.notFound`, `.inProgress`, `.connectFailed` or
    /// `.unavailable`; the returned connection ends when the link drops.
    public func connect(to address: String) async throws -> any BLEConnection {
        do {
            let client = try await client()
            let signals = try await client.signals()
            let tree = try await client.managedObjects()
            let adapter = try adapterPath(in: tree)
            guard let device = device(address, in: tree, adapter: adapter)
            else {
                throw BLETransportError(.notFound, device: address, "BlueZ does not know this device on \(adapter)")
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
        do {
            let client = try await client()
            let signals = try await client.signals()
            let tree = try await client.managedObjects()
            let adapter = try adapterPath(in: tree)
            let wanted = address.uppercased()
            if tree.devices(adapter: adapter).contains(where: { $0.address.uppercased() == wanted }) { return true }
            try await client.setDiscoveryFilter(adapter: adapter, uuids: [])
            do {
                try await client.startDiscovery(adapter: adapter)
            } catch let error as DBusError where error.name == DBusError.bluezInProgress {
                logger.debug("discovery already running on \(adapter)")
            }
            defer {
                Task { [client, logger] in
                    do { try await client.stopDiscovery(adapter: adapter) } catch { logger.debug("StopDiscovery: \(error)") }
                }
            }
            let outcome = try await race(sleep: { [clock] in try await clock.sleep(for: timeout) }) {
                for try await signal in signals {
                    if let added = signal.interfacesAdded, let properties = added.interfaces[BlueZInterface.device] {
                        let device = BlueZDevice(path: added.path, properties: properties)
                        if device.adapterPath == adapter, device.address.uppercased() == wanted { return true }
                    }
                }
                return false
            }
            if case .event(let found) = outcome { return found }
            return false
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .discover)
        }
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

    /// Stops discovery on `adapter` when one of our sessions runs there; returns its filter.
    private func pauseDiscovery(on adapter: String, client: BlueZClient, device: String) async -> [String]? {
        guard let uuids = discoveries.withLock({ $0.values.first { $0.adapter == adapter }?.uuids }) else { return nil }
        do {
            try await client.stopDiscovery(adapter: adapter)
            logger.debug("discovery paused for the connection attempt", device: device)
            return uuids
        } catch {
            logger.debug("StopDiscovery before connecting: \(error)", device: device)
            return nil
        }
    }

    /// Restarts a paused discovery if a session still wants it (the filter is set again).
    private func resumeDiscovery(_ uuids: [String]?, on adapter: String, client: BlueZClient, device: String) async {
        guard let uuids, discoveries.withLock({ $0.values.contains { $0.adapter == adapter } }) else { return }
        do {
            try await client.setDiscoveryFilter(adapter: adapter, uuids: uuids)
            try await client.startDiscovery(adapter: adapter)
        } catch {
            logger.warning("cannot resume discovery on \(adapter): \(error)", device: device)
        }
    }
}

public import BLETransport
import DBus
import FoundationEssentials
import GatewayRuntime
import Synchronization

/// Advertisements through BlueZ: ``ScanPath/advertisementMonitor`` where bluetoothd offers it,
/// else ``ScanPath/managementSocket`` where the process may read it, else ``ScanPath/discovery``.
///
/// **Advertisement Monitor** (bluetoothd `-E` or `Experimental = true`: the adapter then has
/// org.bluez.AdvertisementMonitorManager1): the scan exports an application with one `or_patterns`
/// monitor made of the caller's matches (``AdvertisementMatch/dataPatterns``) and registers it;
/// the kernel then scans passively with the controller's duplicate filter lifted, so a device
/// whose data changes is reported at every change. bluetoothd reads the application
/// (GetManagedObjects) before it answers RegisterMonitor, so the application is served by its
/// own task while the scan awaits the answer. When the scan ends the monitor is unregistered;
/// when bluetoothd releases it on its own (the kernel refused the patterns), the scan goes on by
/// discovery.
///
/// **Discovery**: the adapter's discovery filter is set to `Transport` le with `DuplicateData`
/// true and no UUIDs (Adapter1.SetDiscoveryFilter; a filter also makes BlueZ report
/// non-discoverable advertisers). The kernel may still turn the controller's duplicate filter on
/// whatever `DuplicateData` says (BlueZ issues 406 and 647), so a device whose data changes can be
/// reported less often than it advertises: the listener's rate check says so.
///
/// **Management socket** (the transport's ``ManagementSocketAccess`` allows it: the process holds
/// `CAP_NET_ADMIN`, and the socket binds): discovery runs as above, and the advertisements are
/// read from the kernel's management socket (Device Found events, ``ManagementAdvertisementReader``)
/// instead of Device1's properties: every report the controller passes, repeats included, where
/// BlueZ signals only changed properties. It comes after the monitor because it is discovery
/// plus every report: the controller's duplicate filter, which a monitor lifts, still applies.
/// When the socket fails during the scan, the scan goes on by discovery's D-Bus signals and says so.
///
/// On the monitor and discovery paths every Device1 object's `ManufacturerData`, `ServiceData`
/// and `RSSI` updates (PropertiesChanged) are reported as advertisements. The path chosen is
/// logged with the adapter and is ``path``.
extension BlueZTransport: AdvertisementScanner {
    /// The path the latest scan uses: nil before a scan chose one.
    public var path: ScanPath? { advertisementScanPath.withLock { $0 } }

    /// Scans until the consumer stops iterating; throws ``BLETransportError`` when the bus, the
    /// adapter or bluetoothd goes away. `matches` become the monitor's patterns; with none, or
    /// one no pattern can say (a name glob starting with a wildcard), the scan uses discovery.
    public func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
        startAdvertisementScan(matching: matches).stream
    }

    /// Runs `body` with one scan's advertisements; when `body` returned or threw (or the task was
    /// cancelled), the scan is stopped and this waits until its monitor was unregistered and its
    /// discovery stopped, so that a gateway stopping leaves no monitor behind in bluetoothd.
    public func withAdvertisements<Result>(
        matching matches: [AdvertisementMatch], _ body: (AsyncThrowingStream<Advertisement, any Error>) async throws -> Result
    ) async throws -> Result {
        let (stream, scan) = startAdvertisementScan(matching: matches)
        let result: Result
        do {
            result = try await body(stream)
        } catch {
            scan.cancel()
            await scan.value
            throw error
        }
        scan.cancel()
        await scan.value
        return result
    }

    /// Starts a scan: its stream and the task running it (which ends after its clean-up).
    private func startAdvertisementScan(
        matching matches: [AdvertisementMatch]
    ) -> (stream: AsyncThrowingStream<Advertisement, any Error>, task: Task<Void, Never>) {
        // Bounded: a consumer that falls behind loses the oldest advertisements (counted by the
        // rate it then measures), never blocks the bus.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Advertisement.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1024))
        // An unstructured task because the protocol returns a stream synchronously; it is
        // cancelled when the consumer stops iterating, and advertisements are yielded in bus order.
        let task = Task { [self] in
            do {
                try await runAdvertisementScan(matching: matches, into: continuation)
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch {
                continuation.finish(throwing: BLETransportError.mapping(error, device: nil, during: .discover))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return (stream, task)
    }

    private func runAdvertisementScan(
        matching matches: [AdvertisementMatch], into continuation: AsyncThrowingStream<Advertisement, any Error>.Continuation
    ) async throws {
        let client = try await client()
        let signals = try await client.signals()
        var tree = try await client.managedObjects()
        let adapter = try adapterPath(in: tree)
        let scan = AdvertisementScan()
        let monitor = await registerMonitor(
            client: client, adapter: adapter, matches: matches, scan: scan,
            offered: tree.objects[adapter]?[BlueZInterface.advertisementMonitorManager] != nil)
        let ended: any Error
        do {
            try Task.checkCancellation()
            if let monitor {
                advertisementScanPath.withLock { $0 = .advertisementMonitor }
                logger.info(
                    "scanning advertisements on \(adapter) by an Advertisement Monitor (passive, or_patterns \(Self.shown(monitor.patterns)))")
            } else if let reader = openManagementReader(adapter: adapter, scan: scan, into: continuation) {
                scan.update { $0.managementReader = reader }
                // Before discovery starts: the kernel chooses the duplicate filter when it
                // starts scanning, and it queues our command before bluetoothd's.
                addKernelMonitor(reader, adapter: adapter, matches: matches)
                try await startAdvertisementDiscovery(client: client, adapter: adapter, scan: scan, path: .managementSocket)
                for device in tree.devices(adapter: adapter) {
                    if let name = device.name { reader.remember(name: name, address: device.address) }
                }
                do {
                    try reader.start()
                } catch {
                    managementSocketFailed(adapter: adapter, scan: scan, reason: "the management socket closed before reading started: \(error)")
                }
            } else {
                try await startAdvertisementDiscovery(client: client, adapter: adapter, scan: scan)
            }
            func report(_ path: String) {
                guard let properties = tree.objects[path]?[BlueZInterface.device],
                    BlueZDevice(path: path, properties: properties).adapterPath == adapter
                else { return }
                // On the management-socket path the socket reports; BlueZ's names still serve it.
                if let reader = scan.update({ $0.managementReader }) {
                    let device = BlueZDevice(path: path, properties: properties)
                    if let name = device.name { reader.remember(name: name, address: device.address) }
                    return
                }
                continuation.yield(Self.advertisement(properties, at: clock.now()))
            }
            for try await signal in signals {
                tree.apply(signal)
                if let added = signal.interfacesAdded, added.interfaces[BlueZInterface.device] != nil {
                    report(added.path)
                } else if let change = signal.propertiesChanged, change.interface == BlueZInterface.device,
                    !Set(change.changed.keys).isDisjoint(with: ["ManufacturerData", "ServiceData", "RSSI"])
                {
                    report(signal.path)
                } else if let removed = signal.interfacesRemoved, removed.path == adapter,
                    removed.interfaces.contains(BlueZInterface.adapter)
                {
                    throw BLETransportError(.unavailable, "Bluetooth adapter \(adapter) was removed")
                } else if let change = signal.propertiesChanged, change.interface == BlueZInterface.adapter,
                    signal.path == adapter, change.changed["Powered"]?.bool == false
                {
                    throw BLETransportError(.unavailable, "Bluetooth adapter \(adapter) was powered off")
                }
            }
            try Task.checkCancellation()
            throw BLETransportError(.unavailable, "the bus connection ended")
        } catch {
            ended = error
        }
        // The monitor is unregistered and discovery stopped after our task was cancelled: both
        // need bus round trips, so they run in a task of their own, which this scan awaits (it is
        // not cancelled with the scan), so that a scan started next finds bluetoothd clean.
        scan.update { state in
            state.managementReader?.close()
            state.managementReader = nil
        }
        let cleanup = Task { [client, logger] in
            if let monitor {
                scan.update { $0.unregistering = true }
                do {
                    try await client.unregisterMonitor(adapter: adapter, application: monitor.application)
                } catch {
                    logger.debug("UnregisterMonitor on \(adapter): \(error)")
                }
                monitor.serving.cancel()
            }
            if scan.update({ $0.discovering }) {
                do {
                    try await client.stopDiscovery(adapter: adapter)
                } catch {
                    logger.debug("StopDiscovery on \(adapter): \(error)")
                }
            }
        }
        await cleanup.value
        throw ended
    }

    /// Discovery with the advertisement filter: the ``ScanPath/discovery`` path, or the discovery
    /// under the ``ScanPath/managementSocket`` path.
    private func startAdvertisementDiscovery(
        client: BlueZClient, adapter: String, scan: AdvertisementScan, path: ScanPath = .discovery
    ) async throws {
        try await client.setAdvertisementDiscoveryFilter(adapter: adapter)
        do {
            try await client.startDiscovery(adapter: adapter)
        } catch let error as DBusError where error.name == DBusError.bluezInProgress {
            logger.debug("discovery already running on \(adapter)")
        }
        scan.update { $0.discovering = true }
        advertisementScanPath.withLock { $0 = path }
        if path == .managementSocket {
            logger.info(
                "scanning advertisements on \(adapter) by the management socket (Device Found events; "
                    + "discovery with DuplicateData true kept running over D-Bus)")
        } else {
            logger.info("scanning advertisements on \(adapter) by discovery (DuplicateData true)")
        }
    }

    /// A reader of the management socket for `adapter`, not started, whose advertisements go to
    /// `continuation`; nil (logged, with the reason) when the transport's access refuses, the
    /// adapter has no controller index, or the socket cannot be opened: the scan then uses discovery.
    private func openManagementReader(
        adapter: String, scan: AdvertisementScan, into continuation: AsyncThrowingStream<Advertisement, any Error>.Continuation
    ) -> ManagementAdvertisementReader? {
        if let refusal = managementSocket.refusal() {
            logger.info("no management socket on \(adapter): \(refusal): scanning by discovery")
            return nil
        }
        guard let controller = ManagementAdvertisementReader.controllerIndex(adapterPath: adapter) else {
            logger.info("no management socket on \(adapter): not an hciN adapter: scanning by discovery")
            return nil
        }
        do {
            let descriptor = try managementSocket.open()
            return try ManagementAdvertisementReader(
                descriptor: descriptor, controller: controller, clock: clock, logger: logger,
                deliver: { continuation.yield($0) },
                ended: { [self] reason in managementSocketFailed(adapter: adapter, scan: scan, reason: reason) })
        } catch {
            logger.warning("cannot open the management socket for \(adapter) (\(error)): scanning by discovery")
            return nil
        }
    }

    /// Asks the kernel for an advertisement monitor of the matches' patterns through `reader`,
    /// which lifts the controller's duplicate filter; logged when the matches make none or the
    /// command cannot be sent (the path goes on, with the filter the kernel chooses).
    private func addKernelMonitor(_ reader: ManagementAdvertisementReader, adapter: String, matches: [AdvertisementMatch]) {
        guard let patterns = AdvertisementMonitorApplication.patterns(for: matches) else {
            logger.info("the sources' matches make no monitor patterns: the controller's duplicate filter may stay on for \(adapter)")
            return
        }
        do {
            if try !reader.addMonitor(patterns: patterns) {
                logger.info("no kernel advertisement monitor for \(adapter): the patterns \(Self.shown(patterns)) make no command")
            }
        } catch {
            logger.warning("cannot send the kernel advertisement monitor for \(adapter): \(error)")
        }
    }

    /// The management socket of a running scan failed: the scan goes on by discovery, whose
    /// D-Bus signals it reports from now on.
    private func managementSocketFailed(adapter: String, scan: AdvertisementScan, reason: String) {
        guard let reader = scan.update({ state -> ManagementAdvertisementReader? in
            defer { state.managementReader = nil }
            return state.managementReader
        }) else { return }
        reader.close()
        advertisementScanPath.withLock { $0 = .discovery }
        logger.warning("\(reason) on \(adapter): scanning by discovery instead")
    }

    /// A registered monitor: its application's path and patterns, and the task serving it.
    private struct MonitorRegistration: Sendable {
        let application: String
        let patterns: [AdvertisingDataPattern]
        let serving: Task<Void, Never>
    }

    /// Exports an advertisement monitor application for `matches` and registers it on `adapter`;
    /// nil (logged, with the reason) when the manager is not `offered`, the matches make no
    /// patterns, or bluetoothd refuses it: the scan then uses discovery.
    private func registerMonitor(
        client: BlueZClient, adapter: String, matches: [AdvertisementMatch], scan: AdvertisementScan, offered: Bool
    ) async -> MonitorRegistration? {
        guard offered else {
            logger.info(
                "bluetoothd offers no Advertisement Monitor on \(adapter) (org.bluez.AdvertisementMonitorManager1 is "
                    + "experimental: start bluetoothd with -E, or set Experimental = true in /etc/bluetooth/main.conf): "
                    + "no monitor, the next path is chosen")
            return nil
        }
        guard let patterns = AdvertisementMonitorApplication.patterns(for: matches) else {
            logger.info("the sources' matches make no Advertisement Monitor patterns for \(adapter): no monitor, the next path is chosen")
            return nil
        }
        let application = AdvertisementMonitorApplication(
            number: nextMonitorApplication.add(1, ordering: .relaxed).newValue, patterns: patterns)
        let root: AsyncThrowingStream<DBusIncomingCall, any Error>
        let monitor: AsyncThrowingStream<DBusIncomingCall, any Error>
        do {
            root = try await client.connection.export(path: application.path)
            monitor = try await client.connection.export(path: application.monitorPath)
        } catch {
            logger.warning("cannot export the advertisement monitor \(application.path) (\(error)): scanning \(adapter) by discovery")
            return nil
        }
        let events: @Sendable (AdvertisementMonitorApplication.Event) async -> Void = { [self] event in
            switch event {
            case .activated:
                logger.info("the Advertisement Monitor on \(adapter) is active (or_patterns \(Self.shown(patterns)))")
            case .released:
                guard !scan.update({ $0.unregistering }) else { return }
                logger.warning("bluetoothd released the Advertisement Monitor on \(adapter): scanning by discovery instead")
                do {
                    try await startAdvertisementDiscovery(client: client, adapter: adapter, scan: scan)
                } catch {
                    logger.error("cannot start discovery on \(adapter) after the monitor was released: \(error)")
                }
            case .found(let address):
                logger.debug("the Advertisement Monitor found \(address)")
            case .lost(let address):
                logger.debug("the Advertisement Monitor lost \(address)")
            }
        }
        // An unstructured task: it serves bluetoothd's calls while the scan awaits RegisterMonitor
        // (bluetoothd calls GetManagedObjects before it answers) and, at the end, UnregisterMonitor
        // (Release before it answers), after the scan itself was cancelled. It is cancelled once
        // UnregisterMonitor was answered, which removes the exported objects.
        let serving = Task { await application.serve(root: root, monitor: monitor, event: events) }
        do {
            try await client.registerMonitor(adapter: adapter, application: application.path)
        } catch is CancellationError {
            // The scan was stopped while bluetoothd was registering (a shared scan widened at
            // start-up): the registration may have been done, so the scan's clean-up unregisters it.
            return MonitorRegistration(application: application.path, patterns: patterns, serving: serving)
        } catch {
            serving.cancel()
            logger.warning("RegisterMonitor on \(adapter) failed (\(error)): scanning by discovery")
            return nil
        }
        return MonitorRegistration(application: application.path, patterns: patterns, serving: serving)
    }

    /// Patterns as the log shows them: `ff:6b00 16:1d18` (AD type, then the content, in hex).
    static func shown(_ patterns: [AdvertisingDataPattern]) -> String {
        func hex(_ bytes: [UInt8]) -> String {
            bytes.map { byte in
                let text = String(byte, radix: 16)
                return text.count == 1 ? "0" + text : text
            }.joined()
        }
        return patterns.map { "\(hex([$0.type])):\(hex($0.content))" }.joined(separator: " ")
    }

    /// The advertisement a Device1 object's properties describe (Device1: `ManufacturerData`
    /// a{qv}, `ServiceData` a{sv}, each value an array of bytes).
    static func advertisement(_ properties: [String: DBusValue], at date: Date) -> Advertisement {
        let device = BlueZDevice(path: "", properties: properties)
        var manufacturer: [UInt16: [UInt8]] = [:]
        if case .dictionary(_, _, let entries) = properties["ManufacturerData"]?.unwrapped {
            for entry in entries {
                guard let company = entry.key.unwrapped.integer, let id = UInt16(exactly: company),
                    let bytes = entry.value.unwrapped.bytes
                else { continue }
                manufacturer[id] = bytes
            }
        }
        var service: [BluetoothUUID: [UInt8]] = [:]
        if case .dictionary(_, _, let entries) = properties["ServiceData"]?.unwrapped {
            for entry in entries {
                guard let text = entry.key.unwrapped.string, let uuid = BluetoothUUID(string: text),
                    let bytes = entry.value.unwrapped.bytes
                else { continue }
                service[uuid] = bytes
            }
        }
        return Advertisement(
            address: device.address, name: device.name, rssi: device.rssi, manufacturerData: manufacturer,
            serviceData: service, receivedAt: date)
    }
}

/// What one advertisement scan started, shared with the task serving its monitor.
private final class AdvertisementScan: Sendable {
    struct State {
        /// Discovery was started (and is stopped when the scan ends).
        var discovering = false
        /// UnregisterMonitor was sent: a Release is its answer, not a reason to fall back.
        var unregistering = false
        /// The management socket's reader while it reports (the ``ScanPath/managementSocket``
        /// path): D-Bus's device signals are then not reported.
        var managementReader: ManagementAdvertisementReader?
    }

    private let state = Mutex(State())

    /// Changes the state and returns `body`'s result.
    @discardableResult
    func update<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock { body(&$0) }
    }
}

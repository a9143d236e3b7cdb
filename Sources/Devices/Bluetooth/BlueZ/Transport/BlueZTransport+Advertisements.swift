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
/// plus every report: the controller's duplicate filter, which a monitor lifts, still applies
/// unless the kernel advertisement monitor the path adds through the socket lifts it. Devices
/// found for a discovery interest are still reported from D-Bus. When the socket fails during
/// the scan, the scan goes on by discovery's D-Bus signals and says so.
///
/// On the monitor and discovery paths every Device1 object's `ManufacturerData`, `ServiceData`
/// and `RSSI` updates (PropertiesChanged) are reported as advertisements. The path chosen is
/// logged with the adapter and is ``path``.
///
/// The same scan serves the connection-based sources' discovery (``withScan(for:widenedBy:_:)``
/// with a discovery interest): see ``runScan(for:widenedBy:report:)``, the one code path that
/// asks bluetoothd to scan, and ``take(_:client:adapter:scan:offered:)`` for what it asks.
extension BlueZTransport: AdvertisementScanner {
    /// The path the latest scan uses: nil before a scan chose one.
    public var path: ScanPath? { advertisementScanPath.withLock { $0 } }

    /// The management socket's reports dropped because a scan's loop fell behind its reader
    /// (each reader keeps ``ManagementAdvertisementReader/bufferedReports``), over every scan.
    public var droppedAdvertisements: Int { droppedScanAdvertisements.load(ordering: .relaxed) }

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
        return try await finishing(scan) { try await body(stream) }
    }

    /// Runs `body` with the events of one scan for `interest` (see the type's documentation, and
    /// ``runScan(for:widenedBy:report:)`` for what it asks bluetoothd), taking on each wider
    /// interest from `widenings` while it runs, scoped like ``withAdvertisements(matching:_:)``:
    /// the adapter's shared scan (``SharedAdvertisementScanner``) runs its scans through here.
    public func withScan<Result>(
        for interest: ScanInterest, widenedBy widenings: AsyncStream<ScanInterest>,
        _ body: (AsyncThrowingStream<ScanEvent, any Error>) async throws -> Result
    ) async throws -> Result {
        // Bounded: a consumer that falls behind loses the oldest events, never blocks the bus.
        let (stream, scan) = startScan(for: interest, widenedBy: widenings, bufferingNewest: 1024) { (event: ScanEvent, continuation) in
            continuation.yield(event)
        }
        return try await finishing(scan) { try await body(stream) }
    }

    /// A scan takes on a wider interest without stopping (a new discovery filter, a new monitor).
    public var widensInPlace: Bool { true }

    /// Runs `body`, then stops `scan` and waits until it is over, also when `body` threw.
    private func finishing<Result>(_ scan: Task<Void, Never>, _ body: () async throws -> Result) async throws -> Result {
        let result: Result
        do {
            result = try await body()
        } catch {
            scan.cancel()
            await scan.value
            throw error
        }
        scan.cancel()
        await scan.value
        return result
    }

    /// Starts an advertisement scan: its stream and the task running it.
    private func startAdvertisementScan(
        matching matches: [AdvertisementMatch]
    ) -> (stream: AsyncThrowingStream<Advertisement, any Error>, task: Task<Void, Never>) {
        // Bounded: a consumer that falls behind loses the oldest advertisements (counted by the
        // rate it then measures), never blocks the bus.
        startScan(for: ScanInterest(advertisements: matches), bufferingNewest: 1024) { (event: ScanEvent, continuation) in
            if case .advertisement(let advertisement) = event { continuation.yield(advertisement) }
        }
    }

    /// Starts a scan for `interest`: a stream of what `relay` yields of its events, and the task
    /// running it (which ends after its clean-up). Errors reach the stream as
    /// ``BLETransportError``; cancellation ends it without one.
    func startScan<Element: Sendable>(
        for interest: ScanInterest, widenedBy widenings: AsyncStream<ScanInterest> = AsyncStream { $0.finish() },
        bufferingNewest limit: Int,
        relay: @escaping @Sendable (ScanEvent, AsyncThrowingStream<Element, any Error>.Continuation) -> Void
    ) -> (stream: AsyncThrowingStream<Element, any Error>, task: Task<Void, Never>) {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Element.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(limit))
        // An unstructured task because the protocols return a stream synchronously; it is
        // cancelled when the consumer stops iterating, and events are relayed in bus order.
        let task = Task { [self] in
            do {
                try await runScan(for: interest, widenedBy: widenings) { relay($0, continuation) }
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

    /// One scan of the adapter for `interest`, and for each wider interest from `widenings`
    /// while it runs: the only code that asks bluetoothd to scan (SetDiscoveryFilter,
    /// StartDiscovery, StopDiscovery, RegisterMonitor, UnregisterMonitor).
    ///
    /// It subscribes to bluetoothd's signals first and reads the object tree after, so that a
    /// device made at any moment is in the snapshot or arrives as a signal, and only then
    /// registers a monitor and starts discovery (btvirt, and some controllers, answer a scan's
    /// start with one report at once). What it asks for is ``take(_:client:adapter:scan:offered:)``'s.
    /// Devices found are reported first from the snapshot (when the scan gains a discovery
    /// interest), then as they appear and change (RSSI, name, alias, UUIDs): every device on the
    /// adapter, the consumers filter. Advertisements are reported as Device1's data and RSSI
    /// change. Throws when the bus, the adapter or bluetoothd goes away.
    func runScan(for interest: ScanInterest, widenedBy widenings: AsyncStream<ScanInterest>, report: (ScanEvent) -> Void) async throws {
        let client = try await client()
        let signals = try await client.signals()
        var tree = try await client.managedObjects()
        let adapter = try adapterPath(in: tree)
        let offered = tree.objects[adapter]?[BlueZInterface.advertisementMonitorManager] != nil
        // Bounded like the signals' own stream.
        let (steps, step) = AsyncThrowingStream.makeStream(of: ScanStep.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(4096))
        let scan = AdvertisementScan(step: step)
        let ended: any Error
        do {
            try await take(interest, client: client, adapter: adapter, scan: scan, offered: offered)
            try Task.checkCancellation()
            ended = await withTaskGroup(of: Void.self) { group -> any Error in
                group.addTask {
                    do {
                        for try await signal in signals {
                            // The management socket's wake-up must not be lost to a burst of
                            // signals: its reports would wait for the next one.
                            if case .dropped(.reports) = step.yield(.signal(signal)) { step.yield(.reports) }
                        }
                        step.finish()
                    } catch {
                        step.finish(throwing: error)
                    }
                }
                group.addTask { [self] in
                    for await wider in widenings {
                        do {
                            try await take(wider, client: client, adapter: adapter, scan: scan, offered: offered)
                        } catch is CancellationError {
                            return
                        } catch {
                            logger.error("cannot widen the scan of \(adapter): \(error)")
                        }
                        step.yield(.widened)
                    }
                }
                defer { group.cancelAll() }
                do {
                    try await loop(steps, tree: &tree, adapter: adapter, scan: scan, report: report)
                    try Task.checkCancellation()
                    return BLETransportError(.unavailable, "the bus connection ended")
                } catch {
                    return error
                }
            }
        } catch {
            ended = error
        }
        // The management socket's reader removes its kernel monitor while it still reads the
        // socket (so that the kernel has room for its answer), waits for that answer, then
        // closes. That, unregistering the monitor and stopping discovery (bus round trips) run
        // after our task was cancelled, in a task of their own, which this scan awaits (it is
        // not cancelled with the scan), so that a scan started next finds the kernel and
        // bluetoothd clean. Each waits at most its teardown time (``teardownCallTimeout``): the
        // calls are on the bus once sent, and bluetoothd carries them out in order, before any
        // call this connection sends next; a stopping gateway must not wait on a slow
        // bluetoothd past its own stop deadline.
        let reader = scan.update { state -> ManagementAdvertisementReader? in
            defer { state.managementReader = nil }
            return state.managementReader
        }
        let cleanup = Task { [client, logger, self] in
            await reader?.close(within: Self.kernelMonitorRemovalTimeout)
            if let monitor = scan.update({ state -> MonitorRegistration? in
                state.unregistering = true
                return state.monitor
            }) {
                await unregister(monitor, client: client, adapter: adapter, timeout: Self.teardownCallTimeout)
            }
            if let session = scan.update({ $0.discovering }) {
                discoveries.withLock { _ = $0.removeValue(forKey: session) }
                do {
                    try await client.stopDiscovery(adapter: adapter, timeout: Self.teardownCallTimeout)
                } catch {
                    logger.debug("StopDiscovery on \(adapter): \(error)")
                }
            }
        }
        await cleanup.value
        throw ended
    }

    /// How long a scan's end waits for the kernel's answer to the removal of its kernel monitor.
    static let kernelMonitorRemovalTimeout: Duration = .seconds(2)

    /// How long a call that leaves bluetoothd clean after a scan or a connection ended (the
    /// task that made it cancelled, often as the gateway stops) waits for bluetoothd's reply:
    /// UnregisterMonitor, StopDiscovery, Disconnect. A scan's end is then at most 2 + 2 × this,
    /// within the gateway's 10 s stop deadline. (The lab: bluetoothd under TCG answered a
    /// property read in 5.9 s at the median, 13.8 s at the slowest, beside a class; a CGM
    /// source stopped during a reconnection waited on StopDiscovery's 25 s default, and the
    /// gateway's stop was forced, exit 1.)
    static let teardownCallTimeout: Duration = .seconds(2)

    /// The scan's loop: applies each signal to `tree` and reports what the scan's interest wants
    /// of it; returns when the signals end, throws when the adapter goes. While the management
    /// socket's reader is active, its advertisements are reported and Device1's property changes
    /// only name its devices; discovery's devices are reported from the signals on every path.
    private func loop(
        _ steps: AsyncThrowingStream<ScanStep, any Error>, tree: inout BlueZObjectTree, adapter: String, scan: AdvertisementScan,
        report: (ScanEvent) -> Void
    ) async throws {
        var interest = scan.update { $0.interest } ?? ScanInterest()
        // The snapshot's devices are reported once the scan has a discovery interest.
        var snapshotReported = false
        func device(_ path: String) -> BlueZDevice? { tree.device(at: path, adapter: adapter) }
        // The reader whose devices were named from the tree, and that was started.
        var startedReader: ManagementAdvertisementReader?
        func startReader() {
            guard let reader = scan.update({ $0.managementReader }), reader !== startedReader else { return }
            startedReader = reader
            for known in tree.devices(adapter: adapter) {
                if let name = known.name { reader.remember(name: name, address: known.address) }
            }
            do {
                try reader.start()
            } catch {
                managementSocketFailed(adapter: adapter, scan: scan, reason: "the management socket closed before reading started: \(error)")
            }
        }
        func advertised(_ path: String) {
            guard interest.advertisements != nil, let device = device(path), let properties = tree.objects[path]?[BlueZInterface.device]
            else { return }
            // On the management-socket path the socket reports; BlueZ's names still serve it.
            if let reader = scan.update({ $0.managementReader }) {
                if let name = device.name { reader.remember(name: name, address: device.address) }
                return
            }
            report(.advertisement(Self.advertisement(properties, at: clock.now())))
        }
        func found(_ path: String) {
            guard interest.discovery != nil, let device = device(path) else { return }
            report(
                .discovery(
                    .found(
                        DiscoveredPeripheral(
                            address: device.address, name: device.alias ?? device.name, rssi: device.rssi,
                            serviceUUIDs: device.uuids.compactMap { BluetoothUUID(string: $0) }))))
        }
        func reportSnapshot() {
            guard !snapshotReported, interest.discovery != nil else { return }
            snapshotReported = true
            for known in tree.devices(adapter: adapter) { found(known.path) }
        }
        reportSnapshot()
        startReader()
        for try await step in steps {
            // Read at every step: a wider interest is the scan's as soon as it is being taken on
            // (before bluetoothd is asked for it), so nothing bluetoothd reports for it is missed.
            interest = scan.update { $0.interest } ?? interest
            reportSnapshot()
            // A reader opened by a wider interest starts at the step that says it was taken on.
            startReader()
            // The socket's reports, at every step: taken in the order read, with nothing of
            // bluetoothd's in between (they are the advertisements; the signals only name).
            if let reader = scan.update({ $0.managementReader }) {
                for advertisement in reader.takeReports() where interest.advertisements != nil {
                    report(.advertisement(advertisement))
                }
            }
            guard case .signal(let signal) = step else { continue }
            for change in try ScanDeviceChange.changes(of: signal, applyingTo: &tree, adapter: adapter) {
                switch change {
                case .advertised(let path):
                    advertised(path)
                case .found(let path):
                    found(path)
                case .named(let path):
                    if let reader = scan.update({ $0.managementReader }), let named = device(path), let name = named.name {
                        reader.remember(name: name, address: named.address)
                    }
                case .lost(let address):
                    if interest.discovery != nil { report(.discovery(.lost(address: address))) }
                }
            }
        }
    }

    /// Unregisters `monitor` and stops serving it.
    private func unregister(_ monitor: MonitorRegistration, client: BlueZClient, adapter: String, timeout: Duration = BlueZClient.unregisterMonitorTimeout) async {
        do {
            try await client.unregisterMonitor(adapter: adapter, application: monitor.application, timeout: timeout)
        } catch {
            logger.debug("UnregisterMonitor on \(adapter): \(error)")
        }
        monitor.serving.cancel()
    }

    /// Takes on `wanted`, the scan's first interest or a wider one while it runs. For the
    /// advertisement interest it registers a monitor where bluetoothd offers one (a new one for
    /// wider matches, the old one then unregistered), else discovers with the advertisement
    /// filter, reading the advertisements from the management socket where the transport's
    /// ``ManagementSocketAccess`` allows it (the reader is opened and its kernel monitor added
    /// before discovery starts; the loop names its devices and starts it). A scan that reads the
    /// management socket stays on it when it widens (its kernel monitor replaced by a wider one),
    /// also after bluetoothd released its monitor. For a discovery interest it discovers, also
    /// beside a monitor: a monitor selects
    /// advertisements by their data and scans passively, so it finds no connectable device by
    /// the service UUIDs of its advertisement or scan response; the discovery filter then names
    /// the services (none when addresses are wanted). While discovery runs beside the monitor, the
    /// kernel may turn the controller's duplicate filter on (the advertisement sources' rate
    /// check says so). A filter that changes while discovery runs is set again
    /// (SetDiscoveryFilter), never by a second StartDiscovery.
    private func take(_ wanted: ScanInterest, client: BlueZClient, adapter: String, scan: AdvertisementScan, offered: Bool) async throws {
        let before = scan.update { state -> ScanInterest? in
            let before = state.interest
            state.interest = wanted
            return before
        }
        var retired: MonitorRegistration?
        if let matches = wanted.advertisements, before?.advertisements.map({ Set($0) }) != Set(matches) {
            if let reader = scan.update({ $0.managementReader }) {
                // The scan reads the management socket (bluetoothd offers no monitor, or released
                // the scan's): it stays on it. Every Device Found is read whatever the kernel
                // monitor's patterns; they decide whether the controller's duplicate filter is
                // lifted, so the wider matches get a kernel monitor of their own, which replaces
                // the old one once the kernel added it.
                addKernelMonitor(reader, adapter: adapter, matches: matches)
            } else {
                let registered = await registerMonitor(client: client, adapter: adapter, matches: matches, scan: scan, offered: offered)
                retired = scan.update { state -> MonitorRegistration? in
                    let old = state.monitor
                    state.monitor = registered
                    if let old { state.retired.insert(old.application) }
                    return old
                }
                if let registered {
                    advertisementScanPath.withLock { $0 = .advertisementMonitor }
                    logger.info(
                        "scanning advertisements on \(adapter) by an Advertisement Monitor (passive, or_patterns \(Self.shown(registered.patterns)))")
                } else {
                    openManagementPath(adapter: adapter, scan: scan, matches: matches)
                }
            }
        }
        let monitored = scan.update { $0.monitor != nil }
        let filter: DiscoveryFilter?
        if wanted.advertisements != nil, !monitored {
            filter = .advertisements
        } else if let discovery = wanted.discovery {
            filter = .services(discovery.addresses.isEmpty ? discovery.services.map(\.uuidString) : [])
        } else {
            filter = nil
        }
        if let filter, filter != scan.update({ $0.filter }) {
            try await startDiscovery(client: client, adapter: adapter, filter: filter, scan: scan)
        }
        if let retired { await unregister(retired, client: client, adapter: adapter) }
        if let discovery = wanted.discovery, discovery != before?.discovery {
            let services = discovery.services.isEmpty ? nil : discovery.services.map(\.description).joined(separator: ", ")
            let addresses = discovery.addresses.isEmpty ? nil : "\(discovery.addresses.count) address(es)"
            let wanted = [services, addresses].compactMap { $0 }.joined(separator: " and ")
            logger.info("discovering on \(adapter) for \(wanted.isEmpty ? "every LE device" : wanted)")
        }
    }

    /// Sets `filter` and starts discovery for the scan, or, when it discovers already, sets the
    /// new filter only; the scan's discovery is then paused for each connection attempt
    /// (``discoveries``) and stopped when the scan ends.
    private func startDiscovery(client: BlueZClient, adapter: String, filter: DiscoveryFilter, scan: AdvertisementScan) async throws {
        try await filter.set(on: client, adapter: adapter)
        scan.update { $0.filter = filter }
        if let session = scan.update({ $0.discovering }) {
            discoveries.withLock { $0[session] = (adapter, filter) }
        } else {
            do {
                try await client.startDiscovery(adapter: adapter)
            } catch let error as DBusError where error.name == DBusError.bluezInProgress {
                logger.debug("discovery already running on \(adapter)")
            }
            let session = nextDiscovery.add(1, ordering: .relaxed).newValue
            discoveries.withLock { $0[session] = (adapter, filter) }
            scan.update { $0.discovering = session }
        }
        if filter == .advertisements {
            if scan.update({ $0.managementReader }) != nil {
                advertisementScanPath.withLock { $0 = .managementSocket }
                logger.info(
                    "scanning advertisements on \(adapter) by the management socket (Device Found events; "
                        + "discovery with DuplicateData true kept running over D-Bus)")
            } else {
                advertisementScanPath.withLock { $0 = .discovery }
                logger.info("scanning advertisements on \(adapter) by discovery (DuplicateData true)")
            }
        }
    }

    /// Opens the management socket's reader for the scan (unless it failed before in this scan)
    /// and asks for its kernel monitor; the scan's loop names its devices and starts it. Before
    /// discovery starts: the kernel chooses the duplicate filter when it starts scanning, and it
    /// queues our command before bluetoothd's. False when the socket is not used (logged).
    @discardableResult
    private func openManagementPath(adapter: String, scan: AdvertisementScan, matches: [AdvertisementMatch]) -> Bool {
        guard !scan.update({ $0.managementFailed }), let reader = openManagementReader(adapter: adapter, scan: scan) else { return false }
        scan.update { $0.managementReader = reader }
        addKernelMonitor(reader, adapter: adapter, matches: matches)
        return true
    }

    /// A reader of the management socket for `adapter`, not started, whose reports the scan's
    /// loop takes when woken by ``ScanStep/reports``; nil (logged, with the reason) when the
    /// transport's access refuses, the adapter has no controller index, or the socket cannot be
    /// opened: the scan then uses discovery.
    private func openManagementReader(adapter: String, scan: AdvertisementScan) -> ManagementAdvertisementReader? {
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
            let step = scan.step
            return try ManagementAdvertisementReader(
                descriptor: descriptor, controller: controller, clock: clock, logger: logger,
                ready: { step.yield(.reports) },
                dropped: { [self] in
                    if droppedScanAdvertisements.add(1, ordering: .relaxed).newValue == 1 {
                        logger.warning(
                            "the scan of \(adapter) falls behind the management socket: its oldest reports are dropped "
                                + "(counted in droppedAdvertisements)")
                    }
                },
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
            if state.managementReader != nil { state.managementFailed = true }
            return state.managementReader
        }) else { return }
        reader.close()
        advertisementScanPath.withLock { $0 = .discovery }
        logger.warning("\(reason) on \(adapter): scanning by discovery instead")
    }

    /// A registered monitor: its application's path and patterns, and the task serving it.
    fileprivate struct MonitorRegistration: Sendable {
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
                logger.info(
                    "the Advertisement Monitor on \(adapter) is active (or_patterns \(Self.shown(patterns)); RSSI thresholds "
                        + "\(AdvertisementMonitorApplication.RSSIThresholds.shown), so that bluetoothd calls DeviceFound once per "
                        + "device, not per advertisement)")
            case .released:
                let fallBack = scan.update { state -> Bool in
                    guard !state.unregistering, !state.retired.contains(application.path) else { return false }
                    if state.monitor?.application == application.path { state.monitor = nil }
                    return true
                }
                guard fallBack else { return }
                // The best remaining path: the management socket where the process may read it
                // (startDiscovery logs and records the path taken), else discovery.
                logger.warning("bluetoothd released the Advertisement Monitor on \(adapter): falling back to the next path")
                if scan.update({ $0.managementReader == nil }) {
                    openManagementPath(adapter: adapter, scan: scan, matches: matches)
                    // The loop starts the reader at its next step.
                    scan.step.yield(.widened)
                }
                do {
                    try await startDiscovery(client: client, adapter: adapter, filter: .advertisements, scan: scan)
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
            // The scan was stopped while bluetoothd was registering (a scan stopped at
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

/// What one scan started, shared with the task serving its monitor and the task widening it.
private final class AdvertisementScan: Sendable {
    struct State {
        /// What the scan hears now; nil before its first interest was taken on.
        var interest: ScanInterest?
        /// The monitor registered for the advertisement interest, if any.
        var monitor: BlueZTransport.MonitorRegistration?
        /// Monitors replaced by wider ones (their Release is no reason to fall back).
        var retired: Set<String> = []
        /// The discovery filter set last.
        var filter: DiscoveryFilter?
        /// The session of the discovery the scan started (stopped when the scan ends); nil
        /// while it does not discover.
        var discovering: UInt64?
        /// The scan is ending: a Release is the answer to its UnregisterMonitor, not a reason
        /// to fall back.
        var unregistering = false
        /// The management socket's reader while it reports (the ``ScanPath/managementSocket``
        /// path): Device1's property changes then report no advertisements.
        var managementReader: ManagementAdvertisementReader?
        /// The management socket failed during this scan: a wider interest does not open it again.
        var managementFailed = false
    }

    private let state = Mutex(State())

    /// Where the management socket's reader hands its advertisements: the scan's loop.
    let step: AsyncThrowingStream<ScanStep, any Error>.Continuation

    init(step: AsyncThrowingStream<ScanStep, any Error>.Continuation) {
        self.step = step
    }

    /// Changes the state and returns `body`'s result.
    @discardableResult
    func update<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock { body(&$0) }
    }
}

/// What a scan's loop reads: bluetoothd's signals, the moments the scan took on a wider
/// interest, and that the management socket's reader has reports (which it keeps in its own
/// bounded buffer: one step for any number of them, so they never crowd the signals out).
private enum ScanStep: Sendable {
    case signal(DBusSignal)
    case widened
    case reports
}

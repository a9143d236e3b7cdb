import BLETransport
import DBus
import FoundationEssentials
import GatewayRuntime
import AsyncPrimitives
import Synchronization

/// One connection to a peripheral through BlueZ (the ``BLEConnection`` of ``BlueZTransport``).
///
/// A monitor task applies bluetoothd's signals about the device (``BlueZClient/signals(about:)``:
/// its object's and those below it) to a snapshot of the object tree. It resolves the
/// wait for services, routes PropertiesChanged "Value" to StartNotify subscribers, and finishes
/// the connection when Device1.Connected becomes false or the device object is removed: every
/// notification stream then throws `.disconnected` and later calls throw it too.
///
/// Notifications are stamped with the injected clock where they arrive (the monitor task for
/// StartNotify, the socket's queue for AcquireNotify) and buffered per stream up to
/// ``notificationBufferLimit``; beyond that the oldest is dropped and counted.
final class BlueZPeripheral: BLEConnection {
    /// One `notifications(of:)` stream and what feeds it.
    private struct Subscription {
        let continuation: AsyncThrowingStream<BLENotification, any Error>.Continuation
        /// Characteristics followed through StartNotify, by object path.
        var startNotified: [String: BluetoothUUID] = [:]
        /// Characteristics followed through AcquireNotify sockets.
        var sockets: [NotificationSocket] = []
        /// Values handed to the stream through StartNotify's route or as kept early values (not
        /// the sockets'): when subscribing then fails, the stream is still returned for them.
        var handed = 0
    }

    private struct State {
        var tree: BlueZObjectTree
        var finished: BLETransportError?
        var monitor: Task<Void, Never>?
        var subscriptions: [UInt64: Subscription] = [:]
        var nextID: UInt64 = 0
        var signalsSeen = 0
        /// Values notified before anyone subscribed to them on this connection, by object path,
        /// oldest first (see ``earlyValueLimit``).
        var early: [String: [(value: [UInt8], receivedAt: Date)]] = [:]
    }

    /// How far service resolution has got, as the signals tell it.
    private enum Resolution: Sendable {
        /// Not resolved yet, or a fresh snapshot contradicted the signals.
        case pending
        /// The signals seen so far satisfy ``isResolved(_:)``; a snapshot verifies it.
        case signalled
        /// The connection ended.
        case failed(BLETransportError)

        var isPending: Bool {
            if case .pending = self { return true }
            return false
        }
    }

    /// Notifications each stream holds for a consumer that has not taken them yet: at 1 to 4 Hz
    /// per characteristic, over a minute of falling behind before the oldest is dropped.
    static let notificationBufferLimit = 256

    /// Values kept per characteristic that notified before it was subscribed to on this
    /// connection. bluetoothd keeps a client's StartNotify across a link loss of a device whose
    /// attributes it caches, and enables notifications again itself on reconnection (BlueZ
    /// src/gatt-client.c, `btd_gatt_client_ready` registers every notify client again): the
    /// device's first value can then arrive before this connection subscribes. The next
    /// subscription receives them first, in order, with their arrival times.
    static let earlyValueLimit = 16

    let address: String
    let devicePath: String
    private let client: BlueZClient
    private let clock: any GatewayClock
    private let logger: Logger
    private let state: Mutex<State>
    private let resolution = AsyncCondition(Resolution.pending)
    private let dropped = Atomic<Int>(0)

    /// Whether notifications may go through AcquireNotify (``BlueZVersion/acquireNotifyIsSafe``);
    /// otherwise every subscription uses StartNotify.
    private let acquireNotify: Bool

    init(
        client: BlueZClient, address: String, devicePath: String, tree: BlueZObjectTree, acquireNotify: Bool,
        clock: any GatewayClock, logger: Logger
    ) {
        self.client = client
        self.address = address
        self.devicePath = devicePath
        self.acquireNotify = acquireNotify
        self.clock = clock
        self.logger = logger
        state = Mutex(State(tree: tree))
    }

    deinit {
        // Dropped without disconnect(): stop following the bus (the link itself stays up
        // until bluetoothd's idle timeout or the next connect).
        state.withLock { $0.monitor }?.cancel()
    }

    // MARK: Monitoring

    /// Starts applying `signals`. An unstructured task because the connection outlives the
    /// `connect` call; it is cancelled by ``finish(_:)``, and it handles signals in bus order.
    func startMonitoring(_ signals: AsyncThrowingStream<DBusSignal, any Error>) {
        let task = Task { [weak self] in
            do {
                for try await signal in signals {
                    guard let self else { return }
                    self.handle(signal)
                }
                self?.finish(BLETransportError(.disconnected, device: self?.address, "monitoring stopped"))
            } catch {
                self?.finish(BLETransportError(.unavailable, device: self?.address, "the bus connection dropped: \(error)"))
            }
        }
        state.withLock { $0.monitor = task }
    }

    private func handle(_ signal: DBusSignal) {
        let change = signal.propertiesChanged
        var dropped: String?
        let (resolved, values) = state.withLock { state -> (Bool, [(AsyncThrowingStream<BLENotification, any Error>.Continuation, BluetoothUUID)]) in
            state.tree.apply(signal)
            state.signalsSeen += 1
            if let change, change.interface == BlueZInterface.device, signal.path == devicePath,
                change.changed["Connected"]?.bool == false
            {
                dropped = "the link dropped (Connected is false)"
            }
            if let removed = signal.interfacesRemoved, removed.path == devicePath,
                removed.interfaces.contains(BlueZInterface.device)
            {
                dropped = "the device object was removed"
            }
            let resolved = isResolved(state.tree)
            var values: [(AsyncThrowingStream<BLENotification, any Error>.Continuation, BluetoothUUID)] = []
            if let change, change.interface == BlueZInterface.gattCharacteristic, let value = change.changed["Value"]?.bytes {
                for (id, subscription) in state.subscriptions {
                    guard let uuid = subscription.startNotified[signal.path] else { continue }
                    values.append((subscription.continuation, uuid))
                    state.subscriptions[id]?.handed += 1
                }
                if values.isEmpty { keepEarly(value, path: signal.path, in: &state) }
            }
            return (resolved, values)
        }
        if resolved { markSignalled() }
        if let bytes = change?.changed["Value"]?.bytes {
            for (continuation, uuid) in values { deliver(bytes, of: uuid, to: continuation) }
        }
        if let dropped {
            logger.info("disconnected: \(dropped)", device: address)
            finish(BLETransportError(.disconnected, device: address, dropped))
        }
    }

    /// Keeps a value no subscription took, when bluetoothd says the characteristic is notifying
    /// (a value read by ReadValue changes "Value" too, and is not a notification).
    private func keepEarly(_ value: [UInt8], path: String, in state: inout State) {
        guard path.hasPrefix(devicePath + "/"),
            state.tree.objects[path]?[BlueZInterface.gattCharacteristic]?["Notifying"]?.bool == true
        else { return }
        var kept = state.early[path] ?? []
        if kept.count == Self.earlyValueLimit {
            kept.removeFirst()
            dropped.add(1, ordering: .relaxed)
        }
        kept.append((value, clock.now()))
        state.early[path] = kept
    }

    /// Hands the values kept for `path` to `continuation`, oldest first. Called with the lock
    /// held, in the same critical section that routes later values to the subscription, so
    /// nothing arrives out of order.
    private func flushEarly(
        _ path: String, as uuid: BluetoothUUID, to continuation: AsyncThrowingStream<BLENotification, any Error>.Continuation,
        subscription id: UInt64, in state: inout State
    ) {
        guard let kept = state.early.removeValue(forKey: path), !kept.isEmpty else { return }
        state.subscriptions[id]?.handed += kept.count
        for (value, date) in kept {
            let notification = BLENotification(characteristic: uuid, value: value, receivedAt: date)
            if case .dropped = continuation.yield(notification) { dropped.add(1, ordering: .relaxed) }
        }
        logger.debug("\(String(count: kept.count, "value")) of \(uuid) notified before this connection subscribed", device: address)
    }

    /// ServicesResolved is true AND the GATT objects are exported: BlueZ may announce the
    /// property before the objects appear on a reconnect with cached attributes. Connected is
    /// not checked: Device1.Connect succeeded, BlueZ clears ServicesResolved when the link goes,
    /// and in the device lab a reconnect was seen whose Connected=true never reached us.
    private func isResolved(_ tree: BlueZObjectTree) -> Bool {
        guard let properties = tree.objects[devicePath]?[BlueZInterface.device] else { return false }
        let device = BlueZDevice(path: devicePath, properties: properties)
        return device.servicesResolved && tree.hasGattServices(device: devicePath)
    }

    /// What the resolve wait has seen, for the timeout's message.
    private var resolveState: String {
        state.withLock { state in
            let properties = state.tree.objects[devicePath]?[BlueZInterface.device] ?? [:]
            let device = BlueZDevice(path: devicePath, properties: properties)
            let gatt = state.tree.objects.keys.filter { $0.hasPrefix(devicePath + "/") }.count
            return "known \(!properties.isEmpty), Connected \(device.connected), ServicesResolved "
                + "\(device.servicesResolved), GATT objects \(gatt), signals seen \(state.signalsSeen)"
        }
    }

    /// Waits until services are resolved (see ``isResolved``), the link fails, or `timeout` on
    /// the injected clock. Every `recheck` the wait also reads BlueZ's objects afresh: in one run
    /// of the device lab a reconnect to a bonded device announced neither Connected nor
    /// ServicesResolved to us, and the wait ran out while the next attempt found the link up.
    func waitUntilResolved(timeout: Duration, recheck: Duration = .seconds(3)) async throws {
        let outcome = try await race(sleep: { [clock] in try await clock.sleep(for: timeout) }) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.waitForVerifiedResolution() }
                group.addTask {
                    while true {
                        try await self.clock.sleep(for: recheck)
                        if try await self.resolvedInFreshObjects() {
                            self.logger.info("services resolved in BlueZ's objects, no signal announced it", device: self.address)
                            return
                        }
                    }
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        }
        if case .timedOut = outcome {
            throw BLETransportError(.connectFailed, device: address, "services not resolved within \(timeout) (\(resolveState))")
        }
    }

    private func waitForVerifiedResolution() async throws {
        while true {
            if state.withLock({ isResolved($0.tree) }) { markSignalled() }
            try await resolution.wait { !$0.isPending }
            if case .failed(let error) = resolution.value { throw error }
            // Signals can announce ServicesResolved while the object burst is still under way;
            // BlueZ's own tree is complete once it says so, so one fresh snapshot verifies it.
            if try await resolvedInFreshObjects() { return }
            resolution.update { if case .signalled = $0 { $0 = .pending } }
        }
    }

    /// Whether a fresh read of BlueZ's objects shows the services resolved; when it does, the
    /// device's objects in it replace ours, so the read that found them is the one used (on a
    /// loaded host a second read took long enough for the wait to run out on resolved services).
    private func resolvedInFreshObjects() async throws -> Bool {
        let fresh = try await client.managedObjects()
        guard isResolved(fresh) else { return false }
        state.withLock { state in
            let prefix = devicePath + "/"
            for (path, interfaces) in fresh.objects where path == devicePath || path.hasPrefix(prefix) {
                state.tree.objects[path] = interfaces
            }
        }
        return true
    }

    private func markSignalled() {
        resolution.update { if $0.isPending { $0 = .signalled } }
    }

    /// Ends the connection: fails waiters, ends notification streams, stops the monitor.
    func finish(_ error: BLETransportError) {
        let (subscriptions, monitor) = state.withLock { state in
            guard state.finished == nil else { return ([Subscription](), Task<Void, Never>?.none) }
            state.finished = error
            let result = (Array(state.subscriptions.values), state.monitor)
            state.subscriptions.removeAll()
            state.monitor = nil
            return result
        }
        resolution.set(.failed(error))
        for subscription in subscriptions {
            for socket in subscription.sockets { socket.close() }
            subscription.continuation.finish(throwing: error)
        }
        monitor?.cancel()
    }

    private func checkOpen() throws {
        if let finished = state.withLock({ $0.finished }) {
            throw BLETransportError(.disconnected, device: address, finished.message)
        }
    }

    private func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID) -> BlueZCharacteristic? {
        state.withLock { state in
            state.tree.characteristics(device: devicePath).first {
                $0.uuid == uuid.uuidString && $0.serviceUUID == service.uuidString
            }
        }
    }

    private func requireCharacteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID) throws -> BlueZCharacteristic {
        try checkOpen()
        guard let found = characteristic(uuid, in: service) else {
            throw BLETransportError(.notSupported, device: address, "no characteristic \(uuid) in service \(service)")
        }
        return found
    }

    // MARK: BLEConnection

    func hasCharacteristic(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async -> Bool {
        self.characteristic(characteristic, in: service) != nil
    }

    func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8] {
        let found = try requireCharacteristic(characteristic, in: service)
        do {
            return try await client.readValue(characteristic: found.path)
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .gatt)
        }
    }

    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        let found = try requireCharacteristic(characteristic, in: service)
        do {
            try await client.writeValue(characteristic: found.path, value: value)
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .gatt)
        }
    }

    /// The characteristic's descriptors with the UUID `descriptor`, in handle order (the object
    /// tree's snapshot, kept current by the monitor's signals, as characteristics are).
    private func requireDescriptors(
        _ descriptor: BluetoothUUID, of characteristic: BluetoothUUID, in service: BluetoothUUID
    ) throws -> [BlueZDescriptor] {
        let owner = try requireCharacteristic(characteristic, in: service)
        return state.withLock { state in
            state.tree.descriptors(characteristic: owner.path).filter { $0.uuid == descriptor.uuidString }
        }
    }

    func readDescriptors(_ descriptor: BluetoothUUID, of characteristic: BluetoothUUID, in service: BluetoothUUID) async throws
        -> [[UInt8]]
    {
        var values: [[UInt8]] = []
        for found in try requireDescriptors(descriptor, of: characteristic, in: service) {
            do {
                values.append(try await client.readValue(descriptor: found.path))
            } catch {
                throw BLETransportError.mapping(error, device: address, during: .gatt)
            }
        }
        return values
    }

    func writeDescriptor(
        _ value: [UInt8], to descriptor: BluetoothUUID, at index: Int, of characteristic: BluetoothUUID, in service: BluetoothUUID
    ) async throws {
        let found = try requireDescriptors(descriptor, of: characteristic, in: service)
        guard found.indices.contains(index) else {
            throw BLETransportError(
                .notSupported, device: address, "no descriptor \(descriptor) number \(index + 1) on \(characteristic) (it has \(found.count))")
        }
        do {
            try await client.writeValue(descriptor: found[index].path, value: value)
        } catch {
            throw BLETransportError.mapping(error, device: address, during: .gatt)
        }
    }

    /// Subscribes to each characteristic: through AcquireNotify when it has the `notify` flag and
    /// bluetoothd handles a failed AcquireNotify (``BlueZVersion/acquireNotifyIsSafe``; a socket
    /// with one datagram per notification, BlueZ doc/org.bluez.GattCharacteristic.rst; BlueZ
    /// closes it on disconnect, so it is acquired again on every connection), else, or when
    /// AcquireNotify fails, through StartNotify and PropertiesChanged "Value". All of them feed
    /// one stream; ending it closes the sockets and calls StopNotify.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws
        -> AsyncThrowingStream<BLENotification, any Error>
    {
        let found = try characteristics.map { try requireCharacteristic($0.characteristic, in: $0.service) }
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: BLENotification.self, throwing: (any Error).self,
            bufferingPolicy: .bufferingNewest(Self.notificationBufferLimit))
        let id: UInt64? = state.withLock { state in
            guard state.finished == nil else { return nil }
            state.nextID += 1
            state.subscriptions[state.nextID] = Subscription(continuation: continuation)
            return state.nextID
        }
        guard let id else { throw BLETransportError(.disconnected, device: address, "the link dropped") }
        do {
            for (wanted, characteristic) in zip(characteristics, found) {
                try await subscribe(characteristic, as: wanted.characteristic, subscription: id, continuation: continuation)
            }
        } catch {
            // The values this connection already handed to the stream (notified before it
            // subscribed, as bluetoothd enables a cached subscription itself, or while StartNotify
            // was under way) are the device's: the stream is returned with them, then the error.
            // A link that drops while StartNotify is under way (bluetoothd answers InProgress)
            // would otherwise take a whole connection's measurements with it.
            let handed = state.withLock { $0.subscriptions[id]?.handed ?? 0 }
            if let started = endSubscription(id) { await stopNotify(started) }
            guard handed > 0 else {
                continuation.finish()
                throw error
            }
            logger.info("subscribing failed (\(error)); passing on the \(String(count: handed, "value")) already received", device: address)
            continuation.finish(throwing: error)
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            guard let self, let stopNotify = self.endSubscription(id) else { return }
            // onTermination is synchronous and StopNotify is a bus round trip: a task of its own.
            Task { await self.stopNotify(stopNotify) }
        }
        return stream
    }

    var droppedNotifications: Int { dropped.load(ordering: .relaxed) }

    /// Stamps and yields one notification; counts it when the buffer dropped the oldest.
    private func deliver(
        _ value: [UInt8], of characteristic: BluetoothUUID,
        to continuation: AsyncThrowingStream<BLENotification, any Error>.Continuation
    ) {
        let notification = BLENotification(characteristic: characteristic, value: value, receivedAt: clock.now())
        if case .dropped = continuation.yield(notification) { dropped.add(1, ordering: .relaxed) }
    }

    private func subscribe(
        _ characteristic: BlueZCharacteristic, as uuid: BluetoothUUID, subscription id: UInt64,
        continuation: AsyncThrowingStream<BLENotification, any Error>.Continuation
    ) async throws {
        if acquireNotify, characteristic.flags.contains("notify") {
            do {
                let (descriptor, mtu) = try await client.acquireNotify(characteristic: characteristic.path)
                guard let fd = descriptor.take() else {
                    throw BLETransportError(.failed, device: address, "AcquireNotify returned no fd")
                }
                // BlueZ closes its end when the link drops, so the socket's end of file ends the
                // whole connection; it often arrives before Connected=false does.
                let socket = try NotificationSocket(
                    fd: fd, mtu: mtu, device: address,
                    deliver: { [weak self] value in self?.deliver(value, of: uuid, to: continuation) },
                    closedByPeer: { [weak self] error in self?.finish(error) })
                let added = state.withLock { state -> Bool in
                    guard state.finished == nil, state.subscriptions[id] != nil else { return false }
                    state.subscriptions[id]?.sockets.append(socket)
                    flushEarly(characteristic.path, as: uuid, to: continuation, subscription: id, in: &state)
                    return true
                }
                guard added else {
                    socket.close()
                    throw BLETransportError(.disconnected, device: address, "the link dropped")
                }
                try socket.start()
                logger.debug("notifications of \(uuid) through AcquireNotify (mtu \(mtu))", device: address)
                return
            } catch let error as DBusError {
                logger.debug("AcquireNotify on \(uuid) failed (\(error)); using StartNotify", device: address)
            }
        }
        // Registered before StartNotify so that the first value is not missed.
        let added = state.withLock { state -> Bool in
            guard state.finished == nil, state.subscriptions[id] != nil else { return false }
            state.subscriptions[id]?.startNotified[characteristic.path] = uuid
            flushEarly(characteristic.path, as: uuid, to: continuation, subscription: id, in: &state)
            return true
        }
        guard added else { throw BLETransportError(.disconnected, device: address, "the link dropped") }
        do {
            try await client.startNotify(characteristic: characteristic.path)
        } catch {
            state.withLock { _ = $0.subscriptions[id]?.startNotified.removeValue(forKey: characteristic.path) }
            throw BLETransportError.mapping(error, device: address, during: .gatt)
        }
        logger.debug("notifications of \(uuid) through StartNotify", device: address)
    }

    /// Ends subscription `id`: closes its sockets at once (closing the fd is how a client stops
    /// acquired notifications) and returns the StartNotify characteristics still to be stopped,
    /// or nil when there is nothing to stop (the link is down, or the subscription is gone).
    private func endSubscription(_ id: UInt64) -> [String: BluetoothUUID]? {
        let (subscription, open) = state.withLock { state in
            (state.subscriptions.removeValue(forKey: id), state.finished == nil)
        }
        guard let subscription else { return nil }
        for socket in subscription.sockets { socket.close() }
        return open && !subscription.startNotified.isEmpty ? subscription.startNotified : nil
    }

    private func stopNotify(_ characteristics: [String: BluetoothUUID]) async {
        for (path, uuid) in characteristics {
            do {
                try await client.stopNotify(characteristic: path)
            } catch {
                logger.debug("StopNotify on \(uuid): \(error)", device: address)
            }
        }
    }

    func batteryPercentage() async -> Int? {
        state.withLock { $0.tree.objects[devicePath]?[BlueZInterface.battery]?["Percentage"]?.integer }
    }

    func disconnect() async {
        guard state.withLock({ $0.finished == nil }) else { return }
        finish(BLETransportError(.disconnected, device: address, "disconnected by the gateway"))
        // The caller is often a task being cancelled (the gateway stopping); the disconnect
        // still has to reach bluetoothd, so it runs in a task of its own and is awaited, for at
        // most the teardown time: once sent it is on the bus, and bluetoothd carries it out.
        let client = client
        let devicePath = devicePath
        let request = Task { try await client.disconnect(device: devicePath, timeout: BlueZTransport.teardownCallTimeout) }
        do {
            try await request.value
        } catch let error as DBusError where error.name == DBusError.bluezNotConnected {
            // Already down: nothing to do.
        } catch {
            logger.warning("Device1.Disconnect failed: \(error)", device: address)
        }
    }
}

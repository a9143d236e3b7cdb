import BlueZ
import SampleBus
import Synchronization

/// One connection to a peripheral through BlueZ (the ``BLEConnection`` of ``BlueZTransport``).
///
/// A monitor task applies bluetoothd's signals to a snapshot of the object tree. It resolves the
/// wait for services, routes PropertiesChanged "Value" to StartNotify subscribers, and finishes
/// the connection when Device1.Connected becomes false or the device object is removed: every
/// notification stream then throws `.disconnected` and later calls throw it too.
final class BlueZPeripheral: BLEConnection {
    private struct State {
        var tree: BlueZObjectTree
        var resolved = false
        var resolveWaiter: CheckedContinuation<Void, any Error>?
        var finished: BLETransportError?
        var monitor: Task<Void, Never>?
        /// StartNotify subscribers by id, with the characteristic path they follow.
        var valueSubscribers: [UInt64: (path: String, continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation)] = [:]
        var sockets: [UInt64: NotificationSocket] = [:]
        var nextID: UInt64 = 0
        var signalsSeen = 0
        /// Set by the resolve timeout or cancellation; later waits fail with it.
        var resolveFailure: (any Error)?
    }

    let address: String
    let devicePath: String
    private let client: BlueZClient
    private let logger: Logger
    private let state: Mutex<State>

    init(client: BlueZClient, address: String, devicePath: String, tree: BlueZObjectTree, logger: Logger) {
        self.client = client
        self.address = address
        self.devicePath = devicePath
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
        let (waiter, values) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [AsyncThrowingStream<[UInt8], any Error>.Continuation]) in
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
            var waiter: CheckedContinuation<Void, any Error>?
            if !state.resolved, isResolved(state.tree) {
                state.resolved = true
                waiter = state.resolveWaiter
                state.resolveWaiter = nil
            }
            var values: [AsyncThrowingStream<[UInt8], any Error>.Continuation] = []
            if let change, change.interface == BlueZInterface.gattCharacteristic, change.changed["Value"] != nil {
                values = state.valueSubscribers.values.filter { $0.path == signal.path }.map(\.continuation)
            }
            return (waiter, values)
        }
        waiter?.resume()
        if let bytes = change?.changed["Value"]?.bytes {
            for continuation in values { continuation.yield(bytes) }
        }
        if let dropped {
            logger.info("disconnected: \(dropped)", device: address)
            finish(BLETransportError(.disconnected, device: address, dropped))
        }
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

    /// Waits until services are resolved (see ``isResolved``), the link fails, or `timeout`.
    func waitUntilResolved(timeout: Duration) async throws {
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            guard let self else { return }
            failResolve(BLETransportError(.connectFailed, device: address, "services not resolved within \(timeout) (\(resolveState))"))
        }
        defer { timer.cancel() }
        while true {
            try await waitForResolvedSignals()
            // Signals can announce ServicesResolved while the object burst is still under way;
            // BlueZ's own tree is complete once it says so, so one fresh snapshot verifies it.
            let fresh = try await client.managedObjects()
            let verified = state.withLock { state -> Bool in
                let prefix = devicePath + "/"
                for (path, interfaces) in fresh.objects where path == devicePath || path.hasPrefix(prefix) {
                    state.tree.objects[path] = interfaces
                }
                if isResolved(fresh) { return true }
                state.resolved = false
                return false
            }
            if verified { return }
        }
    }

    /// Waits until the signals seen so far satisfy ``isResolved(_:)``.
    private func waitForResolvedSignals() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if let finished = state.finished { return .failure(finished) }
                    if let failure = state.resolveFailure { return .failure(failure) }
                    if state.resolved || isResolved(state.tree) {
                        state.resolved = true
                        return .success(())
                    }
                    state.resolveWaiter = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            failResolve(CancellationError())
        }
    }

    private func failResolve(_ error: any Error) {
        let waiter = state.withLock { state in
            state.resolveFailure = error
            let waiter = state.resolveWaiter
            state.resolveWaiter = nil
            return waiter
        }
        waiter?.resume(throwing: error)
    }

    /// Ends the connection: fails waiters, ends notification streams, stops the monitor.
    func finish(_ error: BLETransportError) {
        let (waiter, subscribers, sockets, monitor) = state.withLock { state in
            guard state.finished == nil else {
                return (
                    CheckedContinuation<Void, any Error>?.none,
                    [AsyncThrowingStream<[UInt8], any Error>.Continuation](), [NotificationSocket](), Task<Void, Never>?.none
                )
            }
            state.finished = error
            let result = (
                state.resolveWaiter, state.valueSubscribers.values.map(\.continuation), Array(state.sockets.values),
                state.monitor
            )
            state.resolveWaiter = nil
            state.valueSubscribers.removeAll()
            state.sockets.removeAll()
            state.monitor = nil
            return result
        }
        waiter?.resume(throwing: error)
        for continuation in subscribers { continuation.finish(throwing: error) }
        for socket in sockets { socket.close(with: error) }
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

    func notifications(of characteristic: BluetoothUUID, in service: BluetoothUUID) async throws
        -> AsyncThrowingStream<[UInt8], any Error>
    {
        let found = try requireCharacteristic(characteristic, in: service)
        if found.flags.contains("notify") {
            do {
                // AcquireNotify hands over a socket with one datagram per notification
                // (BlueZ doc/org.bluez.GattCharacteristic.rst). BlueZ closes it on disconnect,
                // so it is acquired again on every connection.
                let (descriptor, mtu) = try await client.acquireNotify(characteristic: found.path)
                guard let fd = descriptor.take() else {
                    throw BLETransportError(.failed, device: address, "AcquireNotify returned no fd")
                }
                return try acquiredStream(fd: fd, mtu: mtu, characteristic: found)
            } catch let error as DBusError {
                logger.debug(
                    "AcquireNotify on \(characteristic) failed (\(error)); using StartNotify", device: address)
            }
        }
        return try await startNotifyStream(found)
    }

    private func acquiredStream(fd: Int32, mtu: Int, characteristic: BlueZCharacteristic) throws
        -> AsyncThrowingStream<[UInt8], any Error>
    {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        let socket = try NotificationSocket(fd: fd, mtu: mtu, device: address, continuation: continuation)
        let id: UInt64? = state.withLock { state in
            guard state.finished == nil else { return nil }
            state.nextID += 1
            state.sockets[state.nextID] = socket
            return state.nextID
        }
        guard let id else {
            socket.close(with: BLETransportError(.disconnected, device: address, "the link dropped"))
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            // Closing the fd is how a client stops acquired notifications.
            socket.close(with: nil)
            self?.state.withLock { _ = $0.sockets.removeValue(forKey: id) }
        }
        socket.start()
        logger.debug("notifications of \(characteristic.uuid) through AcquireNotify (mtu \(mtu))", device: address)
        return stream
    }

    private func startNotifyStream(_ characteristic: BlueZCharacteristic) async throws
        -> AsyncThrowingStream<[UInt8], any Error>
    {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        // Subscribe before StartNotify so that the first value is not missed.
        let id = state.withLock { state in
            state.nextID += 1
            state.valueSubscribers[state.nextID] = (characteristic.path, continuation)
            return state.nextID
        }
        do {
            try await client.startNotify(characteristic: characteristic.path)
        } catch {
            state.withLock { _ = $0.valueSubscribers.removeValue(forKey: id) }
            throw BLETransportError.mapping(error, device: address, during: .gatt)
        }
        continuation.onTermination = { [weak self, client, logger, address] _ in
            guard let self else { return }
            let stillOpen = state.withLock { state in
                state.valueSubscribers.removeValue(forKey: id)
                return state.finished == nil
            }
            guard stillOpen else { return }
            // StopNotify is a bus round trip; onTermination is synchronous, so it gets a task.
            Task {
                do {
                    try await client.stopNotify(characteristic: characteristic.path)
                } catch {
                    logger.debug("StopNotify on \(characteristic.uuid): \(error)", device: address)
                }
            }
        }
        logger.debug("notifications of \(characteristic.uuid) through StartNotify", device: address)
        return stream
    }

    func batteryPercentage() async -> Int? {
        state.withLock { $0.tree.objects[devicePath]?[BlueZInterface.battery]?["Percentage"]?.integer }
    }

    func disconnect() async {
        guard state.withLock({ $0.finished == nil }) else { return }
        finish(BLETransportError(.disconnected, device: address, "disconnected by the gateway"))
        // The caller is often a task being cancelled (the gateway stopping); the disconnect
        // still has to reach bluetoothd, so it runs in a task of its own and is awaited.
        let client = client
        let devicePath = devicePath
        let request = Task { try await client.disconnect(device: devicePath) }
        do {
            try await request.value
        } catch let error as DBusError where error.name == DBusError.bluezNotConnected {
            // Already down: nothing to do.
        } catch {
            logger.warning("Device1.Disconnect failed: \(error)", device: address)
        }
    }
}

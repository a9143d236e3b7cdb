public import BLETransport
import DBus
import FoundationEssentials
import GatewayRuntime

/// Advertisements through BlueZ discovery: ``ScanPath/discovery``.
///
/// The adapter's discovery filter is set to `Transport` le with `DuplicateData` true and no
/// UUIDs (Adapter1.SetDiscoveryFilter; a filter also makes BlueZ report non-discoverable
/// advertisers), and every Device1 object's `ManufacturerData`, `ServiceData` and `RSSI`
/// updates (PropertiesChanged) is reported as an advertisement. The kernel may still turn the
/// controller's duplicate filter on whatever `DuplicateData` says (BlueZ issues 406 and 647), so
/// a device whose data changes can be reported less often than it advertises: the listener's
/// rate check says so.
extension BlueZTransport: AdvertisementScanner {
    /// The path: discovery (the Advertisement Monitor path is not built yet).
    public var path: ScanPath? { .discovery }

    /// Scans until the consumer stops iterating; throws ``BLETransportError`` when the bus, the
    /// adapter or bluetoothd goes away.
    public func advertisements() -> AsyncThrowingStream<Advertisement, any Error> {
        // Bounded: a consumer that falls behind loses the oldest advertisements (counted by the
        // rate it then measures), never blocks the bus.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Advertisement.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1024))
        // An unstructured task because the protocol returns a stream synchronously; it is
        // cancelled when the consumer stops iterating, and advertisements are yielded in bus order.
        let task = Task { [self] in
            do {
                try await runAdvertisementScan(into: continuation)
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

    private func runAdvertisementScan(into continuation: AsyncThrowingStream<Advertisement, any Error>.Continuation) async throws {
        let client = try await client()
        let signals = try await client.signals()
        var tree = try await client.managedObjects()
        let adapter = try adapterPath(in: tree)
        try await client.setAdvertisementDiscoveryFilter(adapter: adapter)
        do {
            try await client.startDiscovery(adapter: adapter)
        } catch let error as DBusError where error.name == DBusError.bluezInProgress {
            logger.debug("discovery already running on \(adapter)")
        }
        logger.info("scanning advertisements on \(adapter) by discovery (DuplicateData true)")
        defer {
            // Stopping needs a bus round trip after our task was cancelled, so it runs in its own task.
            Task { [client, logger] in
                do {
                    try await client.stopDiscovery(adapter: adapter)
                } catch {
                    logger.debug("StopDiscovery on \(adapter): \(error)")
                }
            }
        }
        func report(_ path: String) {
            guard let properties = tree.objects[path]?[BlueZInterface.device],
                BlueZDevice(path: path, properties: properties).adapterPath == adapter
            else { return }
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

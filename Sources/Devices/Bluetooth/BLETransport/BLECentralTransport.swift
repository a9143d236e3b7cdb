public import FoundationEssentials

/// A peripheral seen during discovery.
public struct DiscoveredPeripheral: Hashable, Sendable {
    /// The BLE address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    public var name: String?
    /// Signal strength in dBm, when known.
    public var rssi: Int?
    /// Services the peripheral advertises.
    public var serviceUUIDs: [BluetoothUUID]

    public init(address: String, name: String? = nil, rssi: Int? = nil, serviceUUIDs: [BluetoothUUID] = []) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.serviceUUIDs = serviceUUIDs
    }
}

/// What discovery reports.
public enum DiscoveryEvent: Hashable, Sendable {
    /// A peripheral appeared or its advertisement changed.
    case found(DiscoveredPeripheral)
    /// The peripheral's object is gone (BlueZ InterfacesRemoved).
    case lost(address: String)
}

/// The central role of a Bluetooth LE stack, as the heart-rate source needs it.
///
/// The real implementation talks to BlueZ over D-Bus (``BlueZTransport``); a raw L2CAP/ATT
/// transport could implement the same protocol for boxes without bluetoothd; tests and the demo
/// use scripted transports. Every method may throw ``BLETransportError``.
public protocol BLECentralTransport: Sendable {
    /// Discovers peripherals advertising any of `services`. The stream runs until the consumer
    /// cancels; it throws ``BLETransportError`` (`.unavailable`) when there is no Bluetooth.
    /// Implementations must filter by `services` themselves: BlueZ merges every client's filter.
    func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error>

    /// Discovers like ``discover(services:)``, and also reports the devices at `addresses`
    /// (upper case) whatever they advertise: a bonded device may advertise without its services,
    /// and a device BlueZ has already connected to may report its resolved services instead.
    func discover(services: [BluetoothUUID], addresses: Set<String>) -> AsyncThrowingStream<DiscoveryEvent, any Error>

    /// Connects to a peripheral and waits until its GATT services are resolved.
    func connect(to address: String) async throws -> any BLEConnection

    /// Connects like ``connect(to:)``, and when `pairing` is set and the stack holds no bond with
    /// the device, pairs with it (answering a passkey request with `pairing.passkey`) before
    /// returning. Throws `.pairingFailed` when the device refuses.
    func connect(to address: String, pairing: DevicePairing?) async throws -> any BLEConnection

    /// Turns the adapter off and on again (the watchdog's cure for a wedged controller). Every
    /// connection on it drops. Throws `.notSupported` where the stack cannot.
    func powerCycleAdapter() async throws
}

extension BLECentralTransport {
    /// Simulated and scripted stacks advertise every device's services: the filter is enough.
    public func discover(services: [BluetoothUUID], addresses: Set<String>) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        discover(services: services)
    }

    /// Stacks that cannot pair (simulated and scripted ones) connect, and refuse a pairing.
    public func connect(to address: String, pairing: DevicePairing?) async throws -> any BLEConnection {
        guard pairing == nil else {
            throw BLETransportError(.notSupported, device: address, "this Bluetooth stack cannot pair")
        }
        return try await connect(to: address)
    }

    /// Simulated and scripted stacks have no adapter to power-cycle.
    public func powerCycleAdapter() async throws {
        throw BLETransportError(.notSupported, "this Bluetooth stack cannot power-cycle its adapter")
    }
}

/// One live connection to a peripheral. It is finished once the link drops: every notification
/// stream ends, and further calls throw `.disconnected`.
public protocol BLEConnection: Sendable {
    var address: String { get }

    /// Whether the peripheral has `characteristic` in `service`.
    func hasCharacteristic(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async -> Bool

    /// Reads a characteristic's value.
    func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8]

    /// Writes a characteristic's value with a response.
    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws

    /// Reads every descriptor with the UUID `descriptor` of `characteristic` in `service`.
    ///
    /// A characteristic may carry several descriptors with one UUID (a Generic Health Sensor's
    /// Observation Schedule descriptors, one per observation type): their values come in the
    /// GATT database's order (by attribute handle), and a descriptor's place in that list is the
    /// `index` ``writeDescriptor(_:to:at:of:in:)`` names it by. Empty when the characteristic has
    /// no such descriptor. Throws `.notSupported` when the peripheral lacks the characteristic,
    /// `.disconnected` once the link is down, and what ``read(_:in:)`` throws when a read fails.
    func readDescriptors(_ descriptor: BluetoothUUID, of characteristic: BluetoothUUID, in service: BluetoothUUID) async throws
        -> [[UInt8]]

    /// Writes `value`, with a response, to the descriptor with the UUID `descriptor` at `index`
    /// (from 0) among those of `characteristic` with that UUID, in the order
    /// ``readDescriptors(_:of:in:)`` returns them. The order is fixed for the connection: an
    /// index read on it names the same descriptor until the link drops.
    ///
    /// Throws `.notSupported` when the peripheral lacks the characteristic or the descriptor at
    /// `index`, and `.disconnected` once the link is down. A refusal by the peripheral (an ATT
    /// error: a value out of range, a descriptor it does not let the collector write) throws
    /// another code than `.disconnected` and `.unavailable`, usually `.failed`: the link is up,
    /// and the caller may go on.
    func writeDescriptor(
        _ value: [UInt8], to descriptor: BluetoothUUID, at index: Int, of characteristic: BluetoothUUID, in service: BluetoothUUID
    ) async throws

    /// Subscribes to notifications of every characteristic in `characteristics`, all delivered on
    /// one stream in arrival order, each stamped with the moment the transport received it.
    ///
    /// The stream finishes (or throws `.disconnected`) when the link drops; the subscriptions end
    /// when the consumer stops iterating. Throws `.notSupported` when the peripheral lacks one of
    /// the characteristics or it does not notify. The stream buffers what the consumer has not
    /// taken yet up to a bound the transport documents, dropping the oldest notification beyond
    /// it and counting the drop in ``droppedNotifications``.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws
        -> AsyncThrowingStream<BLENotification, any Error>

    /// How many notifications of this connection were dropped because the consumer fell behind
    /// (counted since the connection was made; never decreases).
    var droppedNotifications: Int { get }

    /// The battery level the stack reports outside GATT (BlueZ's `org.bluez.Battery1`), if any.
    func batteryPercentage() async -> Int?

    /// Disconnects. Safe to call more than once.
    func disconnect() async
}

/// A characteristic in its service: what ``BLEConnection/notifications(of:)`` subscribes to.
public struct GATTCharacteristicID: Hashable, Sendable, CustomStringConvertible {
    public var characteristic: BluetoothUUID
    public var service: BluetoothUUID

    public init(_ characteristic: BluetoothUUID, in service: BluetoothUUID) {
        self.characteristic = characteristic
        self.service = service
    }

    public var description: String { "\(characteristic) in \(service)" }
}

/// One notification (or indication) received from a peripheral.
public struct BLENotification: Sendable {
    /// The characteristic that notified.
    public var characteristic: BluetoothUUID
    /// The characteristic value the notification carried, as received.
    public var value: [UInt8]
    /// When the transport received it, on the clock the transport was given. Stamped where the
    /// bytes arrive rather than where they are consumed, so a consumer that falls behind (a full
    /// sink queue) does not shift the sample times.
    public var receivedAt: Date

    public init(characteristic: BluetoothUUID, value: [UInt8], receivedAt: Date) {
        self.characteristic = characteristic
        self.value = value
        self.receivedAt = receivedAt
    }
}

extension BLEConnection {
    /// Subscribes to one characteristic's notifications (see ``notifications(of:)``).
    public func notifications(of characteristic: BluetoothUUID, in service: BluetoothUUID) async throws
        -> AsyncThrowingStream<BLENotification, any Error>
    {
        try await notifications(of: [GATTCharacteristicID(characteristic, in: service)])
    }
}

/// A transport failure, with the device it concerns.
public struct BLETransportError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// No Bluetooth: no bluetoothd on the bus, or no powered adapter.
        case unavailable
        /// The device is not known to the stack (its object is gone).
        case notFound
        /// A connection attempt is already running (org.bluez.Error.InProgress).
        case inProgress
        /// The connection attempt failed (e.g. le-connection-abort-by-local); worth retrying.
        case connectFailed
        /// The link dropped.
        case disconnected
        /// Pairing failed: a wrong or missing passkey, or the device was not ready to pair.
        case pairingFailed
        /// The peripheral lacks the service or characteristic.
        case notSupported
        /// Anything else the stack reported.
        case failed
    }

    public var code: Code
    /// The device address, when the error concerns one device.
    public var device: String?
    public var message: String

    public init(_ code: Code, device: String? = nil, _ message: String) {
        self.code = code
        self.device = device
        self.message = message
    }

    public var description: String {
        (device.map { "\($0): " } ?? "") + "\(code.rawValue): \(message)"
    }
}

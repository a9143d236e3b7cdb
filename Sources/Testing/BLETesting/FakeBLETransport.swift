import BLEProfileKit
public import BLETransport
import Foundation
import Synchronization
public import GatewayRuntime
public import GatewayTesting

/// A scripted Bluetooth stack for tests: the test emits discovery events, decides how each
/// connection attempt ends, sends notification payloads and drops links. Notifications are
/// stamped with `clock`, which the test also gives the source.
public final class FakeBLETransport: BLECentralTransport {
    /// How one connection attempt ends.
    public enum Outcome: Sendable {
        case fail(BLETransportError.Code)
        case succeed
    }

    private struct State {
        var discoveries: [AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation] = []
        var discoverCalls = 0
        var discoveryErrors: [BLETransportError] = []
        var script: [String: [Outcome]] = [:]
        var attempts: [String: Int] = [:]
        var connections: [String: [FakeConnection]] = [:]
    }

    private let state = Mutex(State())
    public let profiles: [String: FakeProfile]
    public let clock: ManualClock

    public init(profiles: [FakeProfile], clock: ManualClock = ManualClock()) {
        self.profiles = Dictionary(uniqueKeysWithValues: profiles.map { ($0.address, $0) })
        self.clock = clock
    }

    public var discoverCalls: Int { state.withLock { $0.discoverCalls } }
    public func attempts(_ address: String) -> Int { state.withLock { $0.attempts[address] ?? 0 } }
    public func connections(_ address: String) -> [FakeConnection] { state.withLock { $0.connections[address] ?? [] } }
    public func latest(_ address: String) -> FakeConnection? { connections(address).last }

    /// The next `discover` calls fail with these errors, in order.
    public func failDiscovery(_ errors: [BLETransportError]) { state.withLock { $0.discoveryErrors += errors } }
    /// The next connection attempts to `address` end like this, in order; then they succeed.
    public func script(_ address: String, _ outcomes: [Outcome]) { state.withLock { $0.script[address, default: []] += outcomes } }

    /// Reports a discovery event to the running discovery session.
    public func emit(_ event: DiscoveryEvent) {
        let continuation = state.withLock { $0.discoveries.last }
        continuation?.yield(event)
    }

    public func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: DiscoveryEvent.self, throwing: (any Error).self)
        let failure = state.withLock { state -> BLETransportError? in
            state.discoverCalls += 1
            if !state.discoveryErrors.isEmpty { return state.discoveryErrors.removeFirst() }
            state.discoveries.append(continuation)
            return nil
        }
        if let failure { continuation.finish(throwing: failure) }
        return stream
    }

    public func connect(to address: String) async throws -> any BLEConnection {
        let outcome = state.withLock { state -> Outcome in
            state.attempts[address, default: 0] += 1
            guard var queue = state.script[address], !queue.isEmpty else { return .succeed }
            let first = queue.removeFirst()
            state.script[address] = queue
            return first
        }
        switch outcome {
        case .fail(let code):
            throw BLETransportError(code, device: address, "scripted failure")
        case .succeed:
            guard let profile = profiles[address] else {
                throw BLETransportError(.notFound, device: address, "no such fake device")
            }
            let connection = FakeConnection(profile: profile, clock: clock)
            state.withLock { $0.connections[address, default: []].append(connection) }
            return connection
        }
    }
}

/// A descriptor of a fake device's characteristic.
public struct FakeDescriptor: Sendable, Hashable {
    public var uuid: BluetoothUUID
    /// What a read answers, until a write on the connection changes it.
    public var value: [UInt8]
    /// When set, every write is refused with this code (recorded first), as a peripheral that
    /// answers with an ATT error (out of range, write not permitted) is by a real stack.
    public var refusesWrites: BLETransportError.Code?

    public init(_ uuid: BluetoothUUID, _ value: [UInt8], refusesWrites: BLETransportError.Code? = nil) {
        self.uuid = uuid
        self.value = value
        self.refusesWrites = refusesWrites
    }
}

/// One descriptor write a ``FakeConnection`` received.
public struct FakeDescriptorWrite: Sendable, Hashable {
    public var descriptor: BluetoothUUID
    /// Its index among the characteristic's descriptors with its UUID.
    public var index: Int
    public var characteristic: BluetoothUUID
    public var value: [UInt8]
    /// Whether the fake refused it (``FakeDescriptor/refusesWrites``).
    public var refused: Bool
}

/// What a fake device offers.
public struct FakeProfile: Sendable {
    public var address: String
    public var name: String?
    public var services: [BluetoothUUID]
    /// Characteristics by service.
    public var characteristics: [BluetoothUUID: [BluetoothUUID]]
    public var values: [BluetoothUUID: [UInt8]]
    public var stackBattery: Int?
    /// Characteristics that refuse writes (`.notSupported`), as one without the write property does.
    public var readOnly: Set<BluetoothUUID>
    /// Descriptors by characteristic, in the GATT database's order (several may share a UUID).
    public var descriptors: [BluetoothUUID: [FakeDescriptor]]

    public var peripheral: DiscoveredPeripheral {
        DiscoveredPeripheral(address: address, name: name, rssi: -40, serviceUUIDs: services)
    }

    public init(
        address: String, name: String? = nil, services: [BluetoothUUID], characteristics: [BluetoothUUID: [BluetoothUUID]],
        values: [BluetoothUUID: [UInt8]] = [:], stackBattery: Int? = nil, readOnly: Set<BluetoothUUID> = [],
        descriptors: [BluetoothUUID: [FakeDescriptor]] = [:]
    ) {
        self.address = address
        self.name = name
        self.services = services
        self.characteristics = characteristics
        self.values = values
        self.stackBattery = stackBattery
        self.readOnly = readOnly
        self.descriptors = descriptors
    }
}

/// One fake link. Finished by ``dropLink()`` or `disconnect()`. Its streams buffer at most
/// ``bufferLimit`` notifications, dropping the oldest and counting it, as a real transport does.
public final class FakeConnection: BLEConnection {
    public static let bufferLimit = 8

    private struct State {
        var streams: [BluetoothUUID: AsyncThrowingStream<BLENotification, any Error>.Continuation] = [:]
        var dropped = 0
        var holdingWrites = false
        var heldWrites: [CheckedContinuation<Void, Never>] = []
        var writes: [(BluetoothUUID, [UInt8])] = []
        var descriptorWrites: [FakeDescriptorWrite] = []
        /// Descriptor values written on this link, by characteristic, then UUID and index.
        var descriptorValues: [BluetoothUUID: [BluetoothUUID: [Int: [UInt8]]]] = [:]
        var connected = true
        var disconnectCalls = 0
    }

    public let profile: FakeProfile
    public let clock: ManualClock
    private let state = Mutex(State())

    init(profile: FakeProfile, clock: ManualClock) {
        self.profile = profile
        self.clock = clock
    }

    public var address: String { profile.address }
    public var writes: [(BluetoothUUID, [UInt8])] { state.withLock { $0.writes } }
    public var disconnectCalls: Int { state.withLock { $0.disconnectCalls } }
    /// Every descriptor write asked for, in order, the refused ones too.
    public var descriptorWrites: [FakeDescriptorWrite] { state.withLock { $0.descriptorWrites } }
    public func isSubscribed(_ characteristic: BluetoothUUID) -> Bool { state.withLock { $0.streams[characteristic] != nil } }

    public func hasCharacteristic(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async -> Bool {
        profile.characteristics[service]?.contains(characteristic) ?? false
    }

    public func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8] {
        guard state.withLock({ $0.connected }) else { throw BLETransportError(.disconnected, device: address, "gone") }
        guard let value = profile.values[characteristic] else { throw BLETransportError(.notSupported, device: address, "no value") }
        return value
    }

    public func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        if profile.readOnly.contains(characteristic) {
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is read-only")
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hold = state.withLock { state in
                state.writes.append((characteristic, value))
                if state.holdingWrites { state.heldWrites.append(continuation) }
                return state.holdingWrites
            }
            if !hold { continuation.resume() }
        }
    }

    /// The profile's descriptors of `characteristic` with the UUID `uuid`, in order; throws as a
    /// real stack does when the link is down or the characteristic is missing.
    private func descriptors(_ uuid: BluetoothUUID, of characteristic: BluetoothUUID, in service: BluetoothUUID) throws -> [FakeDescriptor] {
        guard state.withLock({ $0.connected }) else { throw BLETransportError(.disconnected, device: address, "gone") }
        guard profile.characteristics[service]?.contains(characteristic) ?? false else {
            throw BLETransportError(.notSupported, device: address, "no characteristic \(characteristic) in service \(service)")
        }
        return (profile.descriptors[characteristic] ?? []).filter { $0.uuid == uuid }
    }

    /// The profile's values, or what a write on this link made of them.
    public func readDescriptors(_ descriptor: BluetoothUUID, of characteristic: BluetoothUUID, in service: BluetoothUUID) async throws
        -> [[UInt8]]
    {
        let found = try descriptors(descriptor, of: characteristic, in: service)
        let written = state.withLock { $0.descriptorValues[characteristic]?[descriptor] ?? [:] }
        return found.enumerated().map { written[$0.offset] ?? $0.element.value }
    }

    /// Records the write; refused with ``FakeDescriptor/refusesWrites`` when set, else the value
    /// is what later reads on this link answer.
    public func writeDescriptor(
        _ value: [UInt8], to descriptor: BluetoothUUID, at index: Int, of characteristic: BluetoothUUID, in service: BluetoothUUID
    ) async throws {
        let found = try descriptors(descriptor, of: characteristic, in: service)
        guard found.indices.contains(index) else {
            throw BLETransportError(.notSupported, device: address, "no descriptor \(descriptor) number \(index + 1) on \(characteristic)")
        }
        let refusal = found[index].refusesWrites
        state.withLock { state in
            state.descriptorWrites.append(
                FakeDescriptorWrite(descriptor: descriptor, index: index, characteristic: characteristic, value: value, refused: refusal != nil))
            if refusal == nil { state.descriptorValues[characteristic, default: [:]][descriptor, default: [:]][index] = value }
        }
        if let refusal {
            throw BLETransportError(refusal, device: address, "scripted refusal: ATT error 0xff (out of range)")
        }
    }

    /// From now on `write` records the value, then waits until ``releaseWrites()``: the source's
    /// task is busy, as it would be behind a slow GATT write.
    public func holdWrites() { state.withLock { $0.holdingWrites = true } }
    /// Writes waiting in ``holdWrites()``.
    public var heldWriteCount: Int { state.withLock { $0.heldWrites.count } }
    /// Lets held writes (and later ones) complete.
    public func releaseWrites() {
        let held = state.withLock { state in
            state.holdingWrites = false
            defer { state.heldWrites = [] }
            return state.heldWrites
        }
        for continuation in held { continuation.resume() }
    }

    public func notifications(of characteristics: [GATTCharacteristicID]) async throws
        -> AsyncThrowingStream<BLENotification, any Error>
    {
        for wanted in characteristics where !(profile.characteristics[wanted.service]?.contains(wanted.characteristic) ?? false) {
            throw BLETransportError(.notSupported, device: address, "no \(wanted)")
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: BLENotification.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        state.withLock { state in
            for wanted in characteristics { state.streams[wanted.characteristic] = continuation }
        }
        return stream
    }

    public var droppedNotifications: Int { state.withLock { $0.dropped } }

    public func batteryPercentage() async -> Int? { profile.stackBattery }

    /// Delivers one notification.
    public func send(_ payload: [UInt8], on characteristic: BluetoothUUID = .heartRateMeasurement) {
        let continuation = state.withLock { $0.streams[characteristic] }
        let notification = BLENotification(characteristic: characteristic, value: payload, receivedAt: clock.now())
        if case .dropped = continuation?.yield(notification) { state.withLock { $0.dropped += 1 } }
    }

    /// The link drops: every stream ends.
    public func dropLink() {
        let streams = state.withLock { state -> [AsyncThrowingStream<BLENotification, any Error>.Continuation] in
            state.connected = false
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }

    public func disconnect() async {
        state.withLock { $0.disconnectCalls += 1 }
        dropLink()
    }
}

extension BluetoothAdapters {
    /// The gateway's Bluetooth as `transport`: every adapter reaches it, with the default limits
    /// (or `limits`) and no adapter watchdog, as a scripted stack has no controller to
    /// power-cycle.
    public static func scripted(
        _ transport: any BLECentralTransport, limits: AdapterScheduler.Limits = AdapterScheduler.Limits(),
        clock: any GatewayClock
    ) -> BluetoothAdapters {
        BluetoothAdapters(limits: limits, clock: clock, transport: { _ in transport }, watchdog: false)
    }
}

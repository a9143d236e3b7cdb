public import BLETransport
public import AsyncPrimitives
public import SampleBus
import GatewayRuntime
import FoundationEssentials

/// One followed device's life across link losses: connect, hand the connection to the
/// source's profile code, and reconnect with backoff (``ReconnectStateMachine``) when the link
/// drops, forever. Status details are kept per device under its upper-case address:
/// `state`, `connections`, `linkLosses`.
///
/// A profile that finds its characteristics missing throws ``BLETransportError`` `.notSupported`
/// from `follow`; it is logged as an error and retried with backoff, since a device's GATT
/// database can change with its firmware.
public struct PeripheralSession: Sendable {
    public let peripheral: DiscoveredPeripheral
    public let transport: any BLECentralTransport
    /// The adapter's connection scheduler, shared with every other device on it.
    public let scheduler: AdapterScheduler
    public let context: SourceContext
    public let reconnect: ReconnectPolicy
    /// Whether discovery currently sees the device (``PeripheralSupervisor`` sets it).
    public let presence: AsyncCondition<Bool>
    /// Set when the device's matcher asks for pairing: the connection pairs before `follow`.
    public let pairing: DevicePairing?

    public init(
        peripheral: DiscoveredPeripheral, transport: any BLECentralTransport, scheduler: AdapterScheduler,
        context: SourceContext, reconnect: ReconnectPolicy, presence: AsyncCondition<Bool>, pairing: DevicePairing? = nil
    ) {
        self.pairing = pairing
        self.peripheral = peripheral
        self.transport = transport
        self.scheduler = scheduler
        self.context = context
        self.reconnect = reconnect
        self.presence = presence
    }

    /// The transport's spelling of the address, used for every transport call.
    public var address: String { peripheral.address }
    /// The upper-case address, used in status keys and metadata.
    public var key: String { peripheral.address.uppercased() }
    /// How logs name the device before its Device Information is read.
    public var displayName: String { PeripheralSupervisor.displayName(of: peripheral) }

    /// Sets the status detail `name` of this device.
    public func setDetail(_ name: String, _ value: String?) {
        context.status.setDetail("\(key).\(name)", value)
    }

    /// Sets a number of this device for monitoring: metric family `name`, labelled with the
    /// device's address and its adapter.
    public func setMetric(_ name: String, _ value: Double?) {
        context.status.setMetric(name, ["device": key, "adapter": scheduler.adapter], value)
    }

    /// Connects and reconnects until cancelled (then throws `CancellationError`). `follow` runs
    /// once per connection until the link drops; it returns whether any data arrived, which
    /// resets the backoff.
    public func run(follow: (any BLEConnection) async throws -> Bool) async throws {
        var machine = ReconnectStateMachine(policy: reconnect)
        var action = machine.start()
        let logger = context.logger
        while true {
            try Task.checkCancellation()
            switch action {
            case .connect:
                setMetric("healthgate_device_connected", 0)
                setDetail("state", "waiting for its turn on adapter \(scheduler.adapter)")
                let attempt = try await scheduler.beginAttempt()
                setDetail("state", "connecting")
                let connection: any BLEConnection
                do {
                    connection = try await transport.connect(to: address, pairing: pairing)
                    scheduler.connected(attempt)
                    scheduler.publish(to: context.status)
                } catch is CancellationError {
                    scheduler.abandoned(attempt)
                    throw CancellationError()
                } catch {
                    let code = (error as? BLETransportError)?.code ?? .failed
                    if case .powerCycle(let reason) = scheduler.failed(attempt, code: code) {
                        await PeripheralSupervisor.powerCycle(
                            PeripheralSupervisor.Radio(transport: transport, scheduler: scheduler, watched: true), reason: reason, context: context)
                    }
                    scheduler.publish(to: context.status)
                    if code == .unavailable {
                        if machine.shouldLogUnavailable() {
                            logger.error("cannot connect, no Bluetooth: \(error); retrying", device: displayName)
                        }
                    } else {
                        logger.warning("connection attempt \(machine.failedAttempts + 1) failed: \(error)", device: displayName)
                    }
                    context.status.reportError("\(key): connect failed: \(error)", at: context.clock.now())
                    action = machine.connectFailed(code, devicePresent: presence.value)
                    continue
                }
                machine.connected()
                setDetail("state", "connected")
                setDetail("connections", String(machine.connections))
                setMetric("healthgate_device_connected", 1)
                setMetric("healthgate_device_connections_total", Double(machine.connections))
                setMetric("healthgate_device_link_losses_total", Double(machine.gaps))
                logger.info(machine.connections == 1 ? "connected" : "reconnected (connection \(machine.connections))", device: displayName)
                defer {
                    setMetric("healthgate_device_connected", 0)
                    scheduler.released()
                    scheduler.publish(to: context.status)
                }
                do {
                    if try await follow(connection) { machine.receivedData() }
                    await connection.disconnect()
                    try Task.checkCancellation()
                    logger.warning("link lost; reconnecting", device: displayName)
                    action = machine.linkLost(devicePresent: presence.value)
                    setDetail("linkLosses", String(machine.gaps))
                    setMetric("healthgate_device_link_losses_total", Double(machine.gaps))
                } catch is CancellationError {
                    await connection.disconnect()
                    throw CancellationError()
                } catch let error as BLETransportError where error.code == .notSupported {
                    await connection.disconnect()
                    logger.error("\(error)", device: displayName)
                    context.status.reportError("\(key): \(error.message)", at: context.clock.now())
                    action = machine.connectFailed(.notSupported, devicePresent: presence.value)
                } catch {
                    await connection.disconnect()
                    if Task.isCancelled { throw CancellationError() }
                    logger.warning("link lost: \(error); reconnecting", device: displayName)
                    action = machine.linkLost(devicePresent: presence.value)
                    setDetail("linkLosses", String(machine.gaps))
                    setMetric("healthgate_device_link_losses_total", Double(machine.gaps))
                }
            case .sleep(let delay):
                setDetail("state", "reconnecting in \(delay.seconds) s")
                try await context.clock.sleep(for: delay)
                action = machine.delayElapsed(devicePresent: presence.value)
            case .awaitRediscovery:
                setDetail("state", "waiting for the device to advertise")
                logger.info("device gone; waiting for it to be discovered again", device: displayName)
                try await presence.wait { $0 }
                action = machine.rediscovered()
            }
        }
    }

    /// Reads a characteristic the device may lack: nil when it is absent or the read fails (a
    /// failure is logged and reported); only a dropped link or cancellation is thrown.
    public func optionalRead(
        _ characteristic: BluetoothUUID, in service: BluetoothUUID, from connection: any BLEConnection
    ) async throws -> [UInt8]? {
        guard await connection.hasCharacteristic(characteristic, in: service) else { return nil }
        do {
            return try await connection.read(characteristic, in: service)
        } catch let error as BLETransportError where error.code == .disconnected {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            context.logger.warning("reading \(characteristic) failed: \(error)", device: displayName)
            context.status.reportError("\(key): reading \(characteristic) failed: \(error)", at: context.clock.now())
            return nil
        }
    }
}

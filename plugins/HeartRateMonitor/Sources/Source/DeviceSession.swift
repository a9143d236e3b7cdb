import AsyncPrimitives
import Foundation
import HealthModel
import SampleBus

/// Follows one device for the life of the source: connect, read, subscribe, map, reconnect.
/// Runs in one child task; every piece of mutable state is local to that task.
struct DeviceSession: Sendable {
    let peripheral: DiscoveredPeripheral
    let configuration: HeartRateSourceConfiguration
    let transport: any BLECentralTransport
    let context: SourceContext
    let ids: SampleIDGenerator
    /// Whether discovery currently sees the device; the discovery loop sets it.
    let presence: AsyncCondition<Bool>

    /// The transport's spelling of the address, used for every transport call.
    var address: String { peripheral.address }
    /// The upper-case address, used in status keys and metadata.
    var key: String { peripheral.address.uppercased() }
    var displayName: String {
        peripheral.name.map { "\($0) [\(key)]" } ?? key
    }

    /// Per-device counters, kept across connections and shown in the status details.
    struct Counters {
        var badPayloads = 0
        var droppedNoContact = 0
    }

    func run() async throws {
        var machine = ReconnectStateMachine(policy: configuration.reconnect)
        var counters = Counters()
        var action = machine.start()
        let logger = context.logger
        while true {
            try Task.checkCancellation()
            switch action {
            case .connect:
                setDetail("state", "connecting")
                let connection: any BLEConnection
                do {
                    connection = try await transport.connect(to: address)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    let code = (error as? BLETransportError)?.code ?? .failed
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
                logger.info(machine.connections == 1 ? "connected" : "reconnected (connection \(machine.connections))", device: displayName)
                do {
                    if try await follow(connection, counters: &counters) { machine.receivedData() }
                    await connection.disconnect()
                    try Task.checkCancellation()
                    logger.warning("link lost; reconnecting", device: displayName)
                    action = machine.linkLost(devicePresent: presence.value)
                    setDetail("linkLosses", String(machine.gaps))
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

    private func setDetail(_ name: String, _ value: String?) {
        context.status.setDetail("\(key).\(name)", value)
    }

    // MARK: One connection

    /// Reads the device's facts, subscribes, and maps notifications until the link drops
    /// (returns whether any notification arrived) or the task is cancelled (throws
    /// `CancellationError`). Pending series and running windows are published either way.
    ///
    /// The session's task consumes the transport's stream itself: the transport stamps each
    /// notification on arrival and bounds its own buffer (counting drops), so no hop through a
    /// second queue and task is needed (Benchmarks/RESULTS.md, "End-to-end CPU").
    private func follow(_ connection: any BLEConnection, counters: inout Counters) async throws -> Bool {
        let logger = context.logger
        let facts = try await readFacts(connection, counters: &counters)
        counted(counters)
        let name = facts.device.displayName
        var wanted: [GATTCharacteristicID] = []
        for characteristic in [
            GATTCharacteristicID(.heartRateMeasurement, in: .heartRateService),
            GATTCharacteristicID(.rscMeasurement, in: .runningSpeedAndCadenceService),
        ] where await connection.hasCharacteristic(characteristic.characteristic, in: characteristic.service) {
            wanted.append(characteristic)
        }
        guard !wanted.isEmpty else {
            throw BLETransportError(
                .notSupported, device: key,
                "the device has neither Heart Rate Measurement (0x2A37) nor RSC Measurement (0x2A53)")
        }
        let notifications = try await connection.notifications(of: wanted)
        let names = wanted.map { $0.characteristic == .heartRateMeasurement ? "heart rate" : "running speed and cadence" }
        logger.info("subscribed to \(names.joined(separator: " and ")) notifications", device: name)

        var mapper = NotificationMapper(configuration: configuration, key: key, ids: ids, facts: facts, counters: counters)
        var received = false
        var dropped = connection.droppedNotifications
        do {
            for try await notification in notifications {
                received = true
                switch notification.characteristic {
                case .heartRateMeasurement:
                    let output = mapper.heartRate(notification.value, at: notification.receivedAt)
                    await carryOut(output, counters: mapper.counters, facts: facts, connection: connection)
                case .rscMeasurement:
                    let output = mapper.running(notification.value, at: notification.receivedAt)
                    await carryOut(output, counters: mapper.counters, facts: facts, connection: connection)
                default:
                    logger.debug("ignored a notification of \(notification.characteristic)", device: name)
                }
                let droppedNow = connection.droppedNotifications
                if droppedNow != dropped {
                    context.status.recordsDropped(droppedNow - dropped)
                    logger.warning(
                        "fell behind: the transport dropped \(droppedNow - dropped) notification(s) (\(droppedNow) on this connection)",
                        device: name)
                    dropped = droppedNow
                }
            }
            logger.debug("notifications ended", device: name)
        } catch {
            logger.debug("notifications ended: \(error)", device: name)
        }
        let last = mapper.finishSegment(at: context.clock.now())
        await carryOut(last, counters: mapper.counters, facts: facts, connection: connection)
        counters = mapper.counters
        try Task.checkCancellation()
        return received
    }

    /// What a connection tells about the device.
    struct Facts: Sendable {
        var device: Device
        var battery: Int?
        var location: HeartRateSensorLocation?
        var hasControlPoint: Bool
    }

    private func readFacts(_ connection: any BLEConnection, counters: inout Counters) async throws -> Facts {
        let logger = context.logger
        // A failed read of an optional characteristic is logged and skipped; only a dropped
        // link ends the connection.
        func optionalRead(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8]? {
            guard await connection.hasCharacteristic(characteristic, in: service) else { return nil }
            do {
                return try await connection.read(characteristic, in: service)
            } catch let error as BLETransportError where error.code == .disconnected {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning("reading \(characteristic) failed: \(error)", device: displayName)
                context.status.reportError("\(key): reading \(characteristic) failed: \(error)", at: context.clock.now())
                return nil
            }
        }
        func text(_ characteristic: BluetoothUUID) async throws -> String? {
            guard let bytes = try await optionalRead(characteristic, in: .deviceInformationService) else { return nil }
            let value = String(decoding: bytes, as: UTF8.self)
                .trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: "\0")))
            return value.isEmpty ? nil : value
        }
        var device = Device(name: peripheral.name ?? key, localIdentifier: key)
        device.manufacturer = try await text(.manufacturerName)
        device.model = try await text(.modelNumber)
        device.hardwareVersion = try await text(.hardwareRevision)
        device.firmwareVersion = try await text(.firmwareRevision)
        device.softwareVersion = try await text(.softwareRevision)
        let serial = try await text(.serialNumber)
        device.localIdentifier = HeartRateSource.localIdentifier(address: key, manufacturer: device.manufacturer, serialNumber: serial)

        var battery: Int?
        if let bytes = try await optionalRead(.batteryLevel, in: .batteryService) {
            do {
                battery = try BatteryLevelDecoder.decode(bytes)
            } catch {
                counters.badPayloads += 1
                reportBadPayload(bytes, error, device: device)
            }
        }
        // No Battery Service, or it failed: BlueZ's Battery1 (which reads the same
        // characteristic itself, when the device exposes it).
        if battery == nil { battery = await connection.batteryPercentage() }
        if let battery { setDetail("battery", "\(battery)%") }

        var location: HeartRateSensorLocation?
        if let bytes = try await optionalRead(.bodySensorLocation, in: .heartRateService) {
            do {
                location = try BodySensorLocationDecoder.decode(bytes)
            } catch {
                counters.badPayloads += 1
                reportBadPayload(bytes, error, device: device)
            }
        }
        let controlPoint = await connection.hasCharacteristic(.heartRateControlPoint, in: .heartRateService)
        logger.info(
            "device: \(device.manufacturer ?? "?") \(device.model ?? "?"), id \(device.localIdentifier ?? key)"
                + (battery.map { ", battery \($0)%" } ?? "") + (location.map { ", worn on \($0.name)" } ?? ""),
            device: device.displayName)
        return Facts(device: device, battery: battery, location: location, hasControlPoint: controlPoint)
    }

    func reportBadPayload(_ bytes: [UInt8], _ error: any Error, device: Device) {
        context.logger.warning("bad payload \(HexPayload.format(bytes)): \(error)", device: device.displayName)
        context.status.reportError("\(device.displayName): \(error)", at: context.clock.now())
    }

    /// Publishes what the mapper produced and carries out its effects, in the mapper's order,
    /// with the Control Point write last (after the records it follows are published).
    private func carryOut(
        _ output: NotificationMapper.Output, counters: Counters, facts: Facts, connection: any BLEConnection
    ) async {
        let device = facts.device
        var resetEnergy = false
        for effect in output.effects {
            switch effect {
            case .badPayload(let bytes, let error): reportBadPayload(bytes, error, device: device)
            case .droppedNoContact: context.status.recordsDropped(1)
            case .countersChanged: counted(counters)
            case .notice(let message): context.logger.notice(message, device: device.displayName)
            case .internalError(let message): context.logger.error("internal: \(message)", device: device.displayName)
            case .resetEnergyExpended: resetEnergy = true
            }
        }
        await context.publisher.publish(output.records)
        guard resetEnergy else { return }
        do {
            try await connection.write([0x01], to: .heartRateControlPoint, in: .heartRateService)
            context.logger.info("energy expended saturated at 0xFFFF kJ; reset it", device: device.displayName)
        } catch {
            context.logger.warning("resetting energy expended failed: \(error)", device: device.displayName)
            context.status.reportError("\(key): reset energy expended failed: \(error)", at: context.clock.now())
        }
    }

    func counted(_ counters: Counters) {
        setDetail("badPayloads", counters.badPayloads == 0 ? nil : String(counters.badPayloads))
        setDetail("droppedNoContact", counters.droppedNoContact == 0 ? nil : String(counters.droppedNoContact))
    }
}

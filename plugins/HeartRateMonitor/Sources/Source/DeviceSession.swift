import BLEProfileKit
import BLETransport
import FoundationEssentials
import GatewayTime
import GATTDecoding
import HealthModel
import SampleBus
import GatewayRuntime

/// The heart-rate and running profile of one followed device: per connection, reads its facts,
/// subscribes and maps; ``PeripheralSession`` connects and reconnects around it. Runs in one
/// child task; every piece of mutable state is local to that task.
struct DeviceSession: Sendable {
    let session: PeripheralSession
    let configuration: HeartRateProfileConfiguration
    let ids: SampleIDGenerator
    /// Where the base of the gateway's clock is read: after a step, the dates the session holds
    /// move with the clock (``NotificationMapper/clockStepped(by:)``).
    let clockTrust: any ClockTrust

    var context: SourceContext { session.context }
    var key: String { session.key }
    var displayName: String { session.displayName }

    /// Per-device counters, kept across connections and shown in the status details, and the
    /// last heartbeat placed, before which a new connection places none.
    struct Counters {
        var badPayloads = 0
        var droppedNoContact = 0
        /// RR intervals dropped as covering time earlier beats cover (``HeartbeatSeriesBuilder``).
        var overlappingBeats = 0
        var lastBeat: Date?
        /// The clock base `lastBeat` is on.
        var clockBase: ClockBase?
    }

    func run() async throws {
        var counters = Counters()
        try await session.run { connection in try await follow(connection, counters: &counters) }
    }

    private func setDetail(_ name: String, _ value: String?) {
        session.setDetail(name, value)
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

        var base = clockTrust.clockBase()
        if let seconds = counters.clockBase.flatMap(base.seconds(from:)), seconds != 0 {
            counters.lastBeat = counters.lastBeat?.addingTimeInterval(seconds)
        }
        counters.clockBase = base
        var mapper = NotificationMapper(configuration: configuration, key: key, ids: ids, facts: facts, counters: counters)
        var received = false
        var dropped = connection.droppedNotifications
        do {
            for try await notification in notifications {
                received = true
                let now = clockTrust.clockBase()
                if let seconds = now.seconds(from: base), seconds != 0 {
                    mapper.clockStepped(by: seconds)
                    mapper.counters.clockBase = now
                    base = now
                }
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
                session.reportDroppedNotifications(of: connection, since: &dropped, device: facts.device)
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
        /// What Device Information gives every sample's metadata (battery level, serial number).
        var metadata: Metadata
        var location: HeartRateSensorLocation?
        var hasControlPoint: Bool
    }

    private func readFacts(_ connection: any BLEConnection, counters: inout Counters) async throws -> Facts {
        var bad: [([UInt8], String)] = []
        let information = try await session.readDeviceInformation(connection) { bytes, reason in bad.append((bytes, reason)) }
        let device = information.device
        for (bytes, reason) in bad {
            counters.badPayloads += 1
            reportBadPayload(bytes, reason, device: device)
        }
        var location: HeartRateSensorLocation?
        if let bytes = try await session.optionalRead(.bodySensorLocation, in: .heartRateService, from: connection) {
            do {
                location = try BodySensorLocationDecoder.decode(bytes)
            } catch {
                counters.badPayloads += 1
                reportBadPayload(bytes, error, device: device)
            }
        }
        let controlPoint = await connection.hasCharacteristic(.heartRateControlPoint, in: .heartRateService)
        context.logger.info(
            information.summary(key: key) + (location.map { ", worn on \($0.name)" } ?? ""),
            device: device.displayName)
        return Facts(device: device, metadata: information.metadata, location: location, hasControlPoint: controlPoint)
    }

    func reportBadPayload(_ bytes: [UInt8], _ error: any Error, device: Device) {
        reportBadPayload(bytes, "\(error)", device: device)
    }

    func reportBadPayload(_ bytes: [UInt8], _ error: String, device: Device) {
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
        setDetail("overlappingBeats", counters.overlappingBeats == 0 ? nil : String(counters.overlappingBeats))
    }
}

import BLEProfileKit
import BLETransport
import FoundationEssentials
import GatewayTime
import GATTDecoding
import HealthModel
import HealthStore
import SampleBus
import GatewayRuntime

/// The health profiles of one followed device: per connection, reads Device Information, the
/// battery and the device's clock (Current Time 0x2A2B, when it has one: the offset corrects the
/// times of the records it stored; a clock that is off is set to the gateway's time, see
/// ``DeviceClockSet``), subscribes to every measurement it has, asks a glucose
/// meter for the stored records it has not delivered yet (Record Access Control Point: records
/// from the sequence number after the checkpoint, which is committed with the records in the
/// store's transaction; every record when there is none; a record sent again keeps its sync
/// identifier, so the store keeps one copy), and publishes what ``ClinicalRecordMapper`` makes of
/// each. ``PeripheralSession`` connects and reconnects around it.
struct HealthSession: ConnectionFollower {
    let session: PeripheralSession
    let ids: SampleIDGenerator
    /// The user's height (m) from the gateway's profile: BMI for a scale that sends none.
    let profileHeight: Double?
    /// Whether the gateway's wall clock may be believed: while it may not, no device's clock is
    /// set from it, and a device's own set clock is taken as right.
    let clockTrust: any ClockTrust

    /// The namespace of glucose meters' checkpoints: the last sequence number delivered, per
    /// meter (its local identifier).
    static let checkpointNamespace = "ble-health-glucose"

    /// What a glucose checkpoint holds.
    struct GlucoseCheckpoint: Codable, Sendable {
        var lastSequence: Int
    }

    /// The Record Access Control Point request: "report stored records" (op code 0x01), all
    /// (operator 0x01), or those with a sequence number (filter type 0x01) at least `first`
    /// (operator 0x03).
    static func reportRecords(from first: Int?) -> [UInt8] {
        guard let first, first <= 0xFFFF else { return [0x01, 0x01] }
        return [0x01, 0x03, 0x01, UInt8(first & 0xFF), UInt8(first >> 8)]
    }

    func follow(
        _ connection: any BLEConnection, information: PeripheralSession.DeviceInformation, badPayloads: inout Int
    ) async throws -> Bool {
        let logger = context.logger
        let device = information.device
        let clock = try await readClock(connection)
        let offset = clock?.offset

        var wanted: [GATTCharacteristicID] = []
        var names: [String] = []
        for characteristic in HealthCharacteristic.allCases
        where await connection.hasCharacteristic(characteristic.uuid, in: characteristic.service) {
            wanted.append(GATTCharacteristicID(characteristic.uuid, in: characteristic.service))
            names.append(characteristic.displayName)
        }
        guard !wanted.isEmpty else {
            throw BLETransportError(
                .notSupported, device: session.key,
                "the device has none of Weight (0x2A9D), Body Composition (0x2A9C), Blood Pressure (0x2A35), "
                    + "Temperature (0x2A1C), "
                    + "PLX (0x2A5E, 0x2A5F) or Glucose Measurement (0x2A18)")
        }
        let racp = await connection.hasCharacteristic(.recordAccessControlPoint, in: .glucoseService)
        if racp { wanted.append(GATTCharacteristicID(.recordAccessControlPoint, in: .glucoseService)) }
        logger.info(
            information.summary(key: session.key)
                + (clock?.gatewayUntrusted == true
                    ? ", clock not compared (the gateway's is not synchronized)"
                    : offset.map { String(cFormat: ", clock off by %+.0f s", -$0) } ?? (clock == nil ? "" : ", clock not set")),
            device: device.displayName)
        let clockSet = clock == nil ? nil : try await setClock(connection, offset: offset, device: device)
        let notifications = try await connection.notifications(of: wanted)
        logger.info("subscribed to \(names.joined(separator: ", "))", device: device.displayName)
        let meter = device.localIdentifier ?? session.key
        var lastSequence: Int?
        if racp { lastSequence = try await askForGlucoseRecords(connection, meter: meter, device: device) }

        var metadata = information.metadata
        metadata[.bleAddress] = .string(session.key)
        let mapper = ClinicalRecordMapper(ids: ids)
        // Per connection: a record split across indications never spans two links.
        var bodyComposition = BodyCompositionReassembler()
        return try await receive(notifications, device: device, badPayloads: &badPayloads) { notification, _, badPayloads in
            if notification.characteristic == .recordAccessControlPoint {
                logger.info("record access: \(HexPayload.format(notification.value))", device: device.displayName)
                return
            }
            guard let characteristic = HealthCharacteristic(uuid: notification.characteristic) else { return }
            var mapping = ClinicalRecordMapper.Context(
                device: device, receivedAt: notification.receivedAt, deviceClockOffset: offset, profileHeight: profileHeight,
                clockSet: clockSet)
            mapping.datesFromDeviceClock = clock?.gatewayUntrusted ?? false
            if characteristic == .bodyCompositionMeasurement {
                do {
                    for record in try bodyComposition.append(notification.value) {
                        try await publish(record, mapper: mapper, context: mapping, stamp: metadata, badPayloads: &badPayloads)
                    }
                } catch {
                    session.reportBadPayload(notification.value, "\(error)", device: device, count: &badPayloads)
                }
                return
            }
            do {
                let records = try records(of: characteristic, notification.value, mapper: mapper, context: mapping)
                    .map { $0.stamped(metadata) }
                try await publish(records, meter: meter, lastSequence: &lastSequence)
            } catch {
                session.reportBadPayload(notification.value, "\(error)", device: device, count: &badPayloads)
            }
        } ended: { badPayloads in
            if let pending = bodyComposition.flush() { reportIncomplete(pending, device: device, badPayloads: &badPayloads) }
        }
    }

    /// Asks a glucose meter for the stored records after its committed checkpoint (every record
    /// without one); returns the checkpoint's last sequence number.
    private func askForGlucoseRecords(_ connection: any BLEConnection, meter: String, device: Device) async throws -> Int? {
        let lastSequence = await committedCheckpoint(
            GlucoseCheckpoint.self, namespace: Self.checkpointNamespace, key: meter, what: "the glucose checkpoint",
            instead: "asking for every record", device: device)?.lastSequence
        try await connection.write(
            Self.reportRecords(from: lastSequence.map { $0 + 1 }), to: .recordAccessControlPoint, in: .glucoseService)
        context.logger.info(
            lastSequence.map { "asked for the stored glucose records after sequence number \($0)" }
                ?? "asked for every stored glucose record", device: device.displayName)
        return lastSequence
    }

    /// Publishes a measurement's records; a glucose record's with the checkpoint that passes its
    /// sequence number, which commits with the record: a crash loses neither or both.
    private func publish(_ records: [HealthRecord], meter: String, lastSequence: inout Int?) async throws {
        if let sequence = Self.sequenceNumber(of: records) {
            lastSequence = max(lastSequence ?? sequence, sequence)
            let payload = try JSONEncoder().encode(GlucoseCheckpoint(lastSequence: lastSequence ?? sequence))
            await context.publisher.publish(
                records, checkpoint: SourceCheckpoint(namespace: Self.checkpointNamespace, key: meter, payload: payload))
        } else if !records.isEmpty {
            await context.publisher.publish(records)
        }
    }

    /// Publishes a complete Body Composition record; reports an incomplete one (counted as a bad
    /// payload) and stores none of it.
    private func publish(
        _ record: BodyCompositionReassembler.Record, mapper: ClinicalRecordMapper, context mapping: ClinicalRecordMapper.Context,
        stamp metadata: Metadata, badPayloads: inout Int
    ) async throws {
        guard record.isComplete else { return reportIncomplete(record, device: mapping.device, badPayloads: &badPayloads) }
        let records = try mapper.records(record.measurement, mapping).map { $0.stamped(metadata) }
        if !records.isEmpty { await context.publisher.publish(records) }
    }

    /// Logs and counts a Body Composition record whose other part never came.
    private func reportIncomplete(_ record: BodyCompositionReassembler.Record, device: Device, badPayloads: inout Int) {
        let parts = record.payloads.map(HexPayload.format).joined(separator: " | ")
        session.reportBadPayload(
            record.payloads.last ?? [],
            "incomplete Body Composition Measurement record (\(String(count: record.payloads.count, "part")): \(parts)); not stored",
            device: device, count: &badPayloads)
    }

    /// The glucose record's sequence number, as the mapper wrote it into the sample's metadata.
    static func sequenceNumber(of records: [HealthRecord]) -> Int? {
        for case .quantity(let sample) in records where sample.type == .bloodGlucose {
            if case .integer(let sequence) = sample.metadata[ClinicalRecordMapper.sequenceNumberKey] { return Int(sequence) }
        }
        return nil
    }

    /// Decodes and maps one measurement; the intermediate cuff pressure is logged, not stored.
    private func records(
        of characteristic: HealthCharacteristic, _ bytes: [UInt8], mapper: ClinicalRecordMapper,
        context mapping: ClinicalRecordMapper.Context
    ) throws -> [HealthRecord] {
        switch characteristic {
        case .weightMeasurement:
            return try mapper.records(WeightMeasurementDecoder.decode(bytes), mapping)
        case .bodyCompositionMeasurement:
            // Reassembled in `follow`; a single-packet record goes the same way.
            return []
        case .bloodPressureMeasurement:
            return try mapper.records(BloodPressureMeasurementDecoder.decode(bytes), mapping)
        case .intermediateCuffPressure:
            let cuff = try BloodPressureMeasurementDecoder.decode(bytes, as: .intermediateCuffPressure)
            context.logger.debug("cuff pressure \(cuff.systolic)", device: mapping.device.displayName)
            return []
        case .temperatureMeasurement:
            return try mapper.records(TemperatureMeasurementDecoder.decode(bytes), mapping)
        case .plxSpotCheckMeasurement:
            return try mapper.records(PLXMeasurementDecoder.decodeSpotCheck(bytes), mapping)
        case .plxContinuousMeasurement:
            return try mapper.records(PLXMeasurementDecoder.decodeContinuous(bytes), mapping)
        case .glucoseMeasurement:
            return try mapper.records(GlucoseMeasurementDecoder.decode(bytes), mapping)
        case .glucoseMeasurementContext:
            _ = try GlucoseMeasurementContextDecoder.decode(bytes)
            return []
        }
    }

    /// What the device's Current Time said at connection.
    struct ClockReading: Sendable {
        /// Seconds to add to its wall-clock time to get UTC; nil when its time is not set.
        var offset: TimeInterval?
        /// The gateway's clock was not synchronised: the offset is 0 by trust in the device's
        /// clock, not measured.
        var gatewayUntrusted = false
    }

    /// A clock off by at most this many seconds is left alone: the offset read over the link is
    /// whole seconds and carries the read's latency.
    static let clockSetThreshold: TimeInterval = 2

    /// The device's clock from its Current Time characteristic; nil when it has none (or the
    /// read fails, which is logged).
    private func readClock(_ connection: any BLEConnection) async throws -> ClockReading? {
        guard let bytes = try await session.optionalRead(.currentTime, in: .currentTimeService, from: connection) else {
            return nil
        }
        guard let clock = CurrentTime.timestamp(bytes), clock.isComplete else { return ClockReading(offset: nil) }
        // An unsynchronised gateway clock measures nothing: the device's own clock is the better one.
        guard clockTrust.state().isTrusted else { return ClockReading(offset: 0, gatewayUntrusted: true) }
        return ClockReading(offset: (context.clock.now().timeIntervalSince1970 - clock.wallClockSeconds).rounded())
    }

    /// Sets the device's clock to the gateway's time (UTC) when it is off by more than
    /// ``clockSetThreshold`` or not set: writes Current Time with the adjust reason "manual time
    /// update". Returns when it did; nil when the clock is right or does not take the write (a
    /// read-only Current Time, logged: its records keep the offset read at connection).
    /// - Throws: only when the link drops or the task is cancelled.
    private func setClock(_ connection: any BLEConnection, offset: TimeInterval?, device: Device) async throws -> DeviceClockSet? {
        let trust = clockTrust.state()
        guard trust.isTrusted else {
            context.logger.notice(
                "the gateway's clock is \(trust): the device's clock is left as it is"
                    + (offset == nil ? " (not set: its records are stamped when they arrive)" : " and its time stamps are taken as right"),
                device: device.displayName)
            return nil
        }
        if let offset, abs(offset) <= Self.clockSetThreshold { return nil }
        let now = context.clock.now()
        let was = offset.map { String(cFormat: "it was off by %+.0f s", -$0) } ?? "it was not set"
        do {
            try await connection.write(CurrentTime.value(setting: now), to: .currentTime, in: .currentTimeService)
        } catch let error as BLETransportError where error.code == .disconnected {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            context.logger.info(
                "the device's clock does not take the gateway's time (\(error)); \(was), and its records are corrected by that offset",
                device: device.displayName)
            return nil
        }
        context.logger.notice(
            "set the device's clock to \(now.formatted(.iso8601)) (UTC); \(was)", device: device.displayName)
        session.setDetail("clockSet", now.formatted(.iso8601))
        return DeviceClockSet(at: now)
    }
}

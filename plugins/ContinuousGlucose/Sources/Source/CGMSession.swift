import BLEProfileKit
import BLETransport
import FoundationEssentials
import GatewayTime
import GATTDecoding
import GatewayRuntime
import HealthModel
import HealthStore
import SampleBus

/// One followed continuous glucose monitor. Per connection:
///
/// 1. reads Device Information and the battery, CGM Feature (whether every value carries an
///    E2E-CRC, and every write must), CGM Status (the time offset now, whether the session is
///    stopped);
/// 2. subscribes to CGM Measurement and both control points (their responses are indications);
/// 3. starts or stops the session and sets the communication interval when the configuration
///    asks (`session`, `communicationIntervalMinutes`), through the Specific Ops Control Point;
/// 4. reads CGM Session Start Time; when the sensor has none, sets it to the gateway's time less
///    the time offset (the collector's job, CGMS 1.0.1 §3.4), unless the gateway's clock is not
///    synchronised: then it only counts from that start, and writes nothing;
/// 5. asks the Record Access Control Point for the records after the checkpoint (time offsets
///    from the last one delivered on, when the checkpoint is of the same session; every record
///    otherwise), and stores every record that comes, live or downloaded, with the checkpoint in
///    the store's transaction.
///
/// A record whose E2E-CRC does not match (or that lacks one while the sensor supports E2E-CRC)
/// is not stored: it is counted and logged naming the device, like every bad payload.
struct CGMSession: ConnectionFollower {
    let session: PeripheralSession
    let configuration: CGMProfileConfiguration
    /// Whether the gateway's wall clock may be believed: while it may not, no session start is
    /// written into the sensor.
    let clockTrust: any ClockTrust

    /// The namespace of the sensors' checkpoints.
    static let checkpointNamespace = "ble-cgm"

    /// What a checkpoint holds: the session (its start) and the last time offset delivered.
    struct Checkpoint: Codable, Sendable, Equatable {
        var sessionStart: Int64
        var lastTimeOffset: Int
    }

    func follow(
        _ connection: any BLEConnection, information: PeripheralSession.DeviceInformation, badPayloads: inout Int
    ) async throws -> Bool {
        let logger = context.logger
        let device = information.device
        let name = device.displayName
        guard await connection.hasCharacteristic(CGMCharacteristic.measurement.uuid, in: .continuousGlucoseMonitoringService)
        else {
            throw BLETransportError(.notSupported, device: session.key, "the device has no CGM Measurement (0x2AA7)")
        }

        let feature: CGMFeature? = try await read(.feature, from: connection, device: device, badPayloads: &badPayloads) {
            bytes throws(CGMDecodingError) in try CGMSensorDecoder.feature(bytes)
        }
        let e2e = feature?.supportsE2ECRC ?? false
        let status: CGMStatus? = try await read(.status, from: connection, device: device, badPayloads: &badPayloads) {
            bytes throws(CGMDecodingError) in try CGMSensorDecoder.status(bytes)
        }
        logger.info(
            information.summary(key: session.key)
                + (status.map { ", session \($0.sensorStatus.sessionStopped ? "stopped" : "running"), offset \($0.timeOffsetMinutes) min" } ?? "")
                + (e2e ? ", E2E-CRC" : ""), device: name)

        var wanted = [CGMCharacteristic.measurement]
        for point in [CGMCharacteristic.recordAccessControlPoint, .specificOpsControlPoint]
        where await connection.hasCharacteristic(point.uuid, in: .continuousGlucoseMonitoringService) {
            wanted.append(point)
        }
        let notifications = try await connection.notifications(of: wanted.map(\.id))
        logger.info("subscribed to \(wanted.map(\.displayName).joined(separator: ", "))", device: name)

        let (stopped, offsetNow) = try await askSpecificOps(
            connection, stopped: status?.sensorStatus.sessionStopped ?? false, offsetNow: status?.timeOffsetMinutes ?? 0,
            supported: wanted.contains(.specificOpsControlPoint), e2e: e2e, device: device)
        let started = try await sessionStart(connection, offsetNow: offsetNow, running: !stopped, e2e: e2e, device: device, badPayloads: &badPayloads)
        let sessionStart = started?.date
        let sensor = device.localIdentifier ?? session.key
        var checkpoint: Checkpoint?
        if let sessionStart, wanted.contains(.recordAccessControlPoint) {
            checkpoint = await committedCheckpoint(
                Checkpoint.self, namespace: Self.checkpointNamespace, key: sensor, what: "the CGM checkpoint",
                instead: "asking for every record", device: device)
            let start = Int64(sessionStart.timeIntervalSince1970.rounded())
            if checkpoint?.sessionStart != start { checkpoint = nil }
            let from = checkpoint.map { $0.lastTimeOffset + 1 }
            try await connection.write(
                CGMControlPoint.reportRecords(fromTimeOffset: from), to: CGMCharacteristic.recordAccessControlPoint.uuid,
                in: .continuousGlucoseMonitoringService)
            logger.info(
                from.map { "asked for the stored records from time offset \($0) min" } ?? "asked for every stored record of the session",
                device: name)
        }

        var stamp = information.metadata
        stamp[.bleAddress] = .string(session.key)
        // Dated from the sensor's session start: its own clock, which a step of the gateway's
        // clock does not move (a start counted from the gateway's clock is moved with it).
        if started?.keptBySensor == true { stamp[.deviceClock] = .bool(true) }
        return try await receive(notifications, device: device, badPayloads: &badPayloads) { notification, _, badPayloads in
            switch CGMCharacteristic(uuid: notification.characteristic) {
            case .measurement:
                await store(
                    notification.value, sessionStart: sessionStart, e2e: e2e, sensor: sensor, device: device, stamp: stamp,
                    checkpoint: &checkpoint, badPayloads: &badPayloads)
            case .recordAccessControlPoint:
                let response = CGMControlPoint.recordAccessResponse(notification.value)
                logger.info(
                    "record access: " + (response.map { CGMControlPoint.recordAccessCodeName($0.code) } ?? HexPayload.format(notification.value)),
                    device: name)
            case .specificOpsControlPoint:
                specificOpsResponse(notification.value, device: device)
            default:
                break
            }
        }
    }

    /// Logs a Specific Ops Control Point indication; a refusal is an error on the status board.
    private func specificOpsResponse(_ value: [UInt8], device: Device) {
        let name = device.displayName
        if let response = CGMControlPoint.specificOpsResponse(value), response.code == 1 {
            context.logger.info("specific ops 0x\(String(response.request, radix: 16)): success", device: name)
        } else {
            let what = CGMControlPoint.specificOpsResponse(value).map {
                "request 0x\(String($0.request, radix: 16)): \(CGMControlPoint.specificOpsCodeName($0.code))"
            }
            context.logger.warning("the sensor refused: \(what ?? HexPayload.format(value))", device: name)
            context.status.reportError("\(name): CGM specific ops: \(what ?? HexPayload.format(value))", at: context.clock.now())
        }
    }

    /// Writes the Specific Ops requests the configuration asks for (``requests(stopped:)``) when
    /// the sensor has the control point (a warning and a status detail say when it has not);
    /// returns whether the session is stopped and its time offset now, after them.
    private func askSpecificOps(
        _ connection: any BLEConnection, stopped: Bool, offsetNow: Int, supported: Bool, e2e: Bool, device: Device
    ) async throws -> (stopped: Bool, offsetNow: Int) {
        var (stopped, offsetNow) = (stopped, offsetNow)
        let asked = requests(stopped: stopped)
        if !asked.isEmpty, !supported {
            context.logger.warning(
                "the sensor has no CGM Specific Ops Control Point (0x2AAC): cannot \(asked.map(\.summary).joined(separator: ", ")) as configured",
                device: device.displayName)
            session.setDetail("specificOps", "not supported: \(asked.map(\.summary).joined(separator: ", "))")
        }
        for request in asked where supported {
            try await connection.write(request.value(e2e: e2e), to: CGMCharacteristic.specificOpsControlPoint.uuid, in: .continuousGlucoseMonitoringService)
            context.logger.notice("asked the sensor to \(request.summary)", device: device.displayName)
            if request == .startSession { (stopped, offsetNow) = (false, 0) }
            if request == .stopSession { stopped = true }
        }
        return (stopped, offsetNow)
    }

    /// The Specific Ops requests the configuration asks for, given whether the session is stopped.
    func requests(stopped: Bool) -> [CGMControlPoint.Request] {
        var requests: [CGMControlPoint.Request] = []
        switch configuration.session {
        case .start where stopped: requests.append(.startSession)
        case .stop where !stopped: requests.append(.stopSession)
        default: break
        }
        if let minutes = configuration.communicationIntervalMinutes {
            requests.append(.setCommunicationInterval(minutes: UInt8(clamping: minutes)))
        }
        return requests
    }

    /// Decodes the records of one notification and publishes the good ones, with the checkpoint.
    private func store(
        _ value: [UInt8], sessionStart: Date?, e2e: Bool, sensor: String, device: Device, stamp: Metadata,
        checkpoint: inout Checkpoint?, badPayloads: inout Int
    ) async {
        let records: [CGMMeasurementRecord]
        do {
            records = try CGMMeasurementDecoder.decode(value)
        } catch {
            return session.reportBadPayload(value, "\(error)", device: device, count: &badPayloads)
        }
        guard let sessionStart else {
            return session.reportBadPayload(
                value, "the sensor's session start is unknown, so its records cannot be placed in time; not stored",
                device: device, count: &badPayloads)
        }
        var samples: [HealthRecord] = []
        var lastOffset: Int?
        for record in records {
            switch record.e2e {
            case .mismatch:
                session.reportBadPayload(
                    record.bytes, "CGM Measurement record at time offset \(record.timeOffsetMinutes) min: E2E-CRC \(record.e2e); not stored",
                    device: device, count: &badPayloads)
                continue
            case .absent where e2e:
                session.reportBadPayload(
                    record.bytes, "CGM Measurement record at time offset \(record.timeOffsetMinutes) min has no E2E-CRC, which the sensor says it sends; not stored",
                    device: device, count: &badPayloads)
                continue
            default:
                break
            }
            do {
                if let sample = try CGMRecordMapper.sample(record, sessionStart: sessionStart, device: device, sensor: sensor) {
                    samples.append(HealthRecord.quantity(sample).stamped(stamp))
                } else {
                    context.logger.debug(
                        "record at time offset \(record.timeOffsetMinutes) min: concentration \(record.glucoseConcentration), not stored",
                        device: device.displayName)
                }
                lastOffset = max(lastOffset ?? record.timeOffsetMinutes, record.timeOffsetMinutes)
            } catch {
                session.reportBadPayload(record.bytes, "\(error)", device: device, count: &badPayloads)
            }
        }
        guard let lastOffset else { return }
        let start = Int64(sessionStart.timeIntervalSince1970.rounded())
        let next = Checkpoint(sessionStart: start, lastTimeOffset: max(checkpoint?.lastTimeOffset ?? lastOffset, lastOffset))
        checkpoint = next
        do {
            let payload = try JSONEncoder().encode(next)
            // The checkpoint commits with the records: a crash loses neither or both.
            await context.publisher.publish(
                samples, checkpoint: SourceCheckpoint(namespace: Self.checkpointNamespace, key: sensor, payload: payload))
        } catch {
            await context.publisher.publish(samples)
        }
    }

    /// The session's start (UTC): the sensor's Session Start Time; when it has none and its
    /// session runs, the gateway's time less the time offset now, written to the sensor so that
    /// every later connection and collector counts from the same moment. Nil when neither is
    /// known.
    private func sessionStart(
        _ connection: any BLEConnection, offsetNow: Int, running: Bool, e2e: Bool, device: Device, badPayloads: inout Int
    ) async throws -> (date: Date, keptBySensor: Bool)? {
        let read: CGMSessionStartTime? = try await read(.sessionStartTime, from: connection, device: device, badPayloads: &badPayloads) {
            bytes throws(CGMDecodingError) in try CGMSensorDecoder.sessionStartTime(bytes)
        }
        if let date = read?.date {
            session.setDetail("sessionStart", date.formatted(.iso8601))
            return (date, true)
        }
        guard running else { return nil }
        let now = context.clock.now()
        let start = Date(timeIntervalSince1970: (now.timeIntervalSince1970 - Double(offsetNow) * 60).rounded(.down))
        let trust = clockTrust.state()
        guard trust.isTrusted else {
            context.logger.notice(
                "the gateway's clock is \(trust): no session start time is written into the sensor; counting its records from \(start.formatted(.iso8601))",
                device: device.displayName)
            session.setDetail("sessionStart", start.formatted(.iso8601))
            return (start, false)
        }
        var kept = false
        do {
            try await connection.write(
                CGMSessionStartTime.value(setting: start, e2e: e2e), to: CGMCharacteristic.sessionStartTime.uuid,
                in: .continuousGlucoseMonitoringService)
            context.logger.notice(
                "set the sensor's session start time to \(start.formatted(.iso8601)) (UTC, \(offsetNow) min before now)",
                device: device.displayName)
            kept = true
        } catch let error as BLETransportError where error.code == .disconnected {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            context.logger.warning(
                "the sensor does not take a session start time (\(error)); counting its records from \(start.formatted(.iso8601))",
                device: device.displayName)
        }
        session.setDetail("sessionStart", start.formatted(.iso8601))
        return (start, kept)
    }

    /// Reads and decodes an optional characteristic: nil when the sensor lacks it, the read
    /// fails (logged by the session), it does not decode or its E2E-CRC does not match (each a
    /// bad payload).
    private func read<Value>(
        _ characteristic: CGMCharacteristic, from connection: any BLEConnection, device: Device, badPayloads: inout Int,
        _ decode: ([UInt8]) throws(CGMDecodingError) -> Value
    ) async throws -> Value? {
        guard let bytes = try await session.optionalRead(characteristic.uuid, in: .continuousGlucoseMonitoringService, from: connection)
        else { return nil }
        do {
            let value = try decode(bytes)
            if let verdict = (value as? any E2EChecked)?.e2e, case .mismatch = verdict {
                session.reportBadPayload(bytes, "\(characteristic.displayName): E2E-CRC \(verdict); not used", device: device, count: &badPayloads)
                return nil
            }
            return value
        } catch {
            session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
            return nil
        }
    }
}

/// A decoded value that carries an E2E-CRC verdict.
protocol E2EChecked { var e2e: E2EVerdict { get } }
extension CGMFeature: E2EChecked {}
extension CGMStatus: E2EChecked {}
extension CGMSessionStartTime: E2EChecked {}

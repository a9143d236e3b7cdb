import BLEProfileKit
import BLETransport
import FoundationEssentials
import GATTDecoding
import GatewayRuntime
import HealthModel
import HealthStore
import SampleBus
import Synchronization

/// One followed Generic Health Sensor. Per connection:
///
/// 1. reads Device Information, the battery, Health Sensor Features (the observation types and
///    device specializations, shown in `status`), its Observation Schedule and Valid Range and
///    Accuracy descriptors (shown and logged per type) and LE GATT Security Levels (shown too: a
///    sensor that needs a bond is paired with `healthgate pair`, as any bonded device);
/// 2. subscribes to Live and Stored Health Observations, the Record Access Control Point, the
///    GHS Control Point and Observation Schedule Changed, whichever the sensor has, and writes
///    the configured `schedules` (a refusal is logged and shown, and the connection goes on);
/// 3. asks the Record Access Control Point how many stored observations there are after the
///    checkpoint (record numbers from one past the last one stored, committed with the
///    observations in the store's transaction; every stored observation when there is none),
///    and asks for them unless there are none (a sensor that refuses to count is asked for them
///    at once), so that what the sensor stored while the gateway was away is fetched once after
///    each connection (``StoredDownload``); fewer than announced is a warning, and a report
///    without a segment for ``stallTimeout`` is aborted (the next connection resumes after the
///    last record stored);
/// 4. asks for live observations (GHS Control Point 0x01), or, when `liveObservations` is false,
///    asks the sensor to stop sending them (0x02), as some send them unasked;
/// 5. reassembles each observation from its segments (``GHSSegmentReassembler``; a lost or
///    out-of-order segment drops that observation, counted by reason, never decoded as
///    garbage), decodes it and publishes what ``GHSObservationMapper`` makes of it.
struct GHSSession: ConnectionFollower {
    let session: PeripheralSession
    let configuration: GHSProfileConfiguration

    /// The namespace of the sensors' checkpoints.
    static let checkpointNamespace = "ble-ghs"

    /// What a checkpoint holds: the last record number stored.
    struct Checkpoint: Codable, Sendable, Equatable {
        var lastRecordNumber: UInt32
    }

    /// How many observations were dropped, by reason (kept across connections, shown in `status`).
    let drops = DropCounts()
    /// How many decoded observations (or parts) were not stored (invalid, unplaceable).
    let notStored = DropCounts()
    /// How many stored downloads were aborted, by reason (kept across connections, shown in
    /// `status`).
    let abortedDownloads = DropCounts()

    /// Observations dropped, by the reason's name.
    final class DropCounts: Sendable {
        private let counts = Mutex<[String: Int]>([:])

        /// Counts one more drop for `reason`; returns every count, by name.
        func add(_ reason: String) -> [String: Int] {
            counts.withLock {
                $0[reason, default: 0] += 1
                return $0
            }
        }
    }

    func follow(
        _ connection: any BLEConnection, information: PeripheralSession.DeviceInformation, badPayloads: inout Int
    ) async throws -> Bool {
        let logger = context.logger
        let device = information.device
        let name = device.displayName
        let service = BluetoothUUID.genericHealthSensorService
        let hasLive = await connection.hasCharacteristic(GHSCharacteristic.liveHealthObservations.uuid, in: service)
        let hasStored = await connection.hasCharacteristic(GHSCharacteristic.storedHealthObservations.uuid, in: service)
        guard hasLive || hasStored else {
            throw BLETransportError(
                .notSupported, device: session.key, "the device has neither Live (0x2B8B) nor Stored Health Observations (0x2BDD)")
        }

        let features = try await readFeaturesAndSecurity(connection, device: device, badPayloads: &badPayloads)
        let descriptors = try await readFeatureDescriptors(connection, device: device, badPayloads: &badPayloads)
        logger.info(
            information.summary(key: session.key)
                + (features.map { ", observes \($0.supportedObservationTypes.map(Self.describe).joined(separator: ", "))" } ?? ""),
            device: name)

        var wanted: [GHSCharacteristic] = []
        let subscribed: [GHSCharacteristic] = [
            .liveHealthObservations, .storedHealthObservations, .recordAccessControlPoint, .controlPoint, .observationScheduleChanged,
        ]
        for characteristic in subscribed where await connection.hasCharacteristic(characteristic.uuid, in: service) {
            wanted.append(characteristic)
        }
        let notifications = try await connection.notifications(of: wanted.map(\.id))
        logger.info("subscribed to \(wanted.map(\.displayName).joined(separator: ", "))", device: name)
        // After subscribing, so that the sensor's Observation Schedule Changed indications arrive.
        try await writeSchedules(connection, descriptors: descriptors, listedTypes: features?.supportedObservationTypes, device: device)

        let sensor = device.localIdentifier ?? session.key
        let requested = try await requestObservations(connection, subscribed: wanted, sensor: sensor, device: device)
        var checkpoint = requested.checkpoint
        let download = requested.download

        var stamp = information.metadata
        stamp[.bleAddress] = .string(session.key)
        if let specializations = features?.deviceSpecializations, !specializations.isEmpty {
            stamp[.mdcDeviceSpecializations] = .string(specializations.map { "\($0.mdcCode):\($0.version)" }.joined(separator: ","))
        }
        var live = GHSSegmentReassembler()
        var stored = GHSSegmentReassembler()
        // The stored download (its report request, its stall watch, the erase after it) runs
        // beside the loop, never in it: a loop that waited would leave the transport's buffer to
        // overflow with the notifications of that time.
        return try await receive(notifications, device: device, badPayloads: &badPayloads) { notification, beside, badPayloads in
            switch notification.characteristic {
            case GHSCharacteristic.liveHealthObservations.uuid:
                guard let object = reassemble(notification.value, with: &live, on: .liveHealthObservations, device: device, badPayloads: &badPayloads)
                else { return }
                await publish(
                    object, recordNumber: nil, sensor: sensor, device: device, stamp: stamp, receivedAt: notification.receivedAt,
                    checkpoint: &checkpoint, badPayloads: &badPayloads)
            case GHSCharacteristic.storedHealthObservations.uuid:
                download?.noteActivity(at: context.clock.uptime())
                await receiveStored(
                    notification, with: &stored, download: download, sensor: sensor, device: device, stamp: stamp,
                    checkpoint: &checkpoint, badPayloads: &badPayloads)
            case GHSCharacteristic.recordAccessControlPoint.uuid:
                guard let indication = recordAccess(notification.value, device: device, badPayloads: &badPayloads) else { return }
                if proceed(indication, of: download, device: device), let download {
                    beside.addTask { await fetch(download, sensor: sensor, connection: connection, device: device) }
                }
            case GHSCharacteristic.controlPoint.uuid:
                controlPoint(notification.value, device: device, badPayloads: &badPayloads)
            case GHSCharacteristic.observationScheduleChanged.uuid:
                scheduleChanged(notification.value, device: device, badPayloads: &badPayloads)
            default:
                break
            }
        }
    }

    /// Feeds a Stored Health Observations segment to `reassembler`; once an observation is whole,
    /// splits it from its record number (one that does not split is a bad payload), notes its
    /// arrival in `download` and publishes it with its checkpoint.
    private func receiveStored(
        _ notification: BLENotification, with reassembler: inout GHSSegmentReassembler, download: StoredDownload?, sensor: String,
        device: Device, stamp: Metadata, checkpoint: inout Checkpoint?, badPayloads: inout Int
    ) async {
        guard let bytes = reassemble(notification.value, with: &reassembler, on: .storedHealthObservations, device: device, badPayloads: &badPayloads)
        else { return }
        let record: (recordNumber: UInt32, object: [UInt8])
        do {
            record = try GHSStoredObservation.split(bytes)
        } catch {
            return session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
        }
        download?.recordArrived(record.recordNumber)
        await publish(
            record.object, recordNumber: record.recordNumber, sensor: sensor, device: device, stamp: stamp,
            receivedAt: notification.receivedAt, checkpoint: &checkpoint, badPayloads: &badPayloads)
    }

    /// Reads Health Sensor Features (nil when absent or not decoding: a bad payload) and the LE
    /// GATT Security Levels: into `status`, with a warning saying how to pair a sensor that needs
    /// a bond while its devices entry asks for none.
    private func readFeaturesAndSecurity(
        _ connection: any BLEConnection, device: Device, badPayloads: inout Int
    ) async throws -> GHSHealthSensorFeatures? {
        let service = BluetoothUUID.genericHealthSensorService
        var features: GHSHealthSensorFeatures?
        if let bytes = try await session.optionalRead(GHSCharacteristic.healthSensorFeatures.uuid, in: service, from: connection) {
            do {
                features = try GHSHealthSensorFeatures.decode(bytes)
            } catch {
                session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
            }
        }
        if let bytes = try await session.optionalRead(GHSCharacteristic.securityLevels.uuid, in: service, from: connection) {
            do {
                let levels = try GHSSecurityLevel.decodeList(bytes)
                session.setDetail("securityLevels", levels.map { "mode \($0.mode) level \($0.level)" }.joined(separator: ", "))
                // LE security mode 1 above level 1 is an encrypted link, which needs a bond.
                if session.pairing == nil, let needed = levels.first(where: { $0.mode == 1 && $0.level > 1 }) {
                    context.logger.warning(
                        "the sensor requires LE security mode 1 level \(needed.level) (an encrypted, bonded link): unless it is paired already, pair it with \"pair\": true or \"passkey\" in its devices entry, or once with 'healthgate pair \(session.key)'",
                        device: device.displayName)
                    session.setDetail("pairing", "required (mode 1 level \(needed.level)): healthgate pair \(session.key)")
                }
            } catch {
                session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
            }
        }
        if let features {
            session.setDetail("observationTypes", features.supportedObservationTypes.map(Self.describe).joined(separator: ", "))
            session.setDetail("deviceSpecializations", Self.describe(features.deviceSpecializations ?? []))
        }
        return features
    }

    /// Asks how many stored observations there are after the sensor's committed checkpoint (all
    /// of them without one), and for live observations or for their end, as far as the sensor
    /// has the characteristics; returns the checkpoint and the stored download the count began
    /// (nil when the sensor has no Record Access Control Point or no Stored Health Observations).
    private func requestObservations(
        _ connection: any BLEConnection, subscribed wanted: [GHSCharacteristic], sensor: String, device: Device
    ) async throws -> (checkpoint: Checkpoint?, download: StoredDownload?) {
        let service = BluetoothUUID.genericHealthSensorService
        var checkpoint: Checkpoint?
        var download: StoredDownload?
        if wanted.contains(.recordAccessControlPoint), wanted.contains(.storedHealthObservations) {
            checkpoint = await committedCheckpoint(
                Checkpoint.self, namespace: Self.checkpointNamespace, key: sensor, what: "the GHS checkpoint",
                instead: "asking for every stored observation", device: device)
            let filter = checkpoint.map { GHSRecordAccessControlPoint.Filter.from(recordNumber: $0.lastRecordNumber &+ 1) } ?? .all
            download = StoredDownload(filter: filter)
            try await connection.write(
                GHSRecordAccessControlPoint.Request.reportNumberOfRecords(filter).encoded, to: GHSCharacteristic.recordAccessControlPoint.uuid,
                in: service)
            context.logger.info("asked how many stored observations the sensor holds\(Self.range(filter))", device: device.displayName)
        }
        if wanted.contains(.controlPoint), wanted.contains(.liveHealthObservations) {
            // A sensor may send live observations unasked: with liveObservations false it is told to stop.
            let request: GHSControlPoint.Request = configuration.liveObservations ? .startSendingLiveObservations : .stopSendingLiveObservations
            try await connection.write(request.encoded, to: GHSCharacteristic.controlPoint.uuid, in: service)
            context.logger.info(
                configuration.liveObservations ? "asked for live observations" : "asked the sensor to stop sending live observations (liveObservations is false)",
                device: device.displayName)
        }
        return (checkpoint, download)
    }

    /// Shows an Observation Schedule Changed indication in `status` and the log.
    private func scheduleChanged(_ value: [UInt8], device: Device, badPayloads: inout Int) {
        do {
            let schedule = try GHSObservationSchedule.decode(value, characteristic: .observationScheduleChanged)
            let summary = Self.summary(schedule)
            session.setDetail("schedule.\(schedule.type)", summary)
            context.logger.info("observation schedule of \(Self.describe(schedule.type)): \(summary)", device: device.displayName)
        } catch {
            session.reportBadPayload(value, "\(error)", device: device, count: &badPayloads)
        }
    }

    /// Device specializations as `status` shows them: their MDC codes and versions.
    static func describe(_ specializations: [GHSDeviceSpecialization]) -> String? {
        specializations.isEmpty ? nil : specializations.map { "\($0.mdcCode) v\($0.version)" }.joined(separator: ", ")
    }

    /// An MDC observation code with its reference identifier when the gateway knows it.
    static func describe(_ code: UInt32) -> String {
        MDCNomenclature.reference(code).map { "\($0) (\(code))" } ?? String(code)
    }

    /// Feeds one segment to `reassembler`: the whole observation when it was the last, nil
    /// otherwise; a dropped observation is counted once (by its first reason, in `status`, and as
    /// one bad payload) and logged.
    private func reassemble(
        _ value: [UInt8], with reassembler: inout GHSSegmentReassembler, on characteristic: GHSCharacteristic, device: Device,
        badPayloads: inout Int
    ) -> [UInt8]? {
        var complete: [UInt8]?
        for outcome in reassembler.receive(value) {
            switch outcome {
            case .complete(let bytes):
                complete = bytes
            case .needMore, .discarded:
                // A discarded segment is a part of an observation counted when it was dropped.
                continue
            case .dropped(let reason):
                let counts = drops.add(reason.name)
                session.setDetail("droppedObservations", counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                session.setMetric("healthgate_ghs_dropped_observations_total", Double(counts.values.reduce(0, +)))
                session.reportBadPayload(value, "\(characteristic.displayName): observation dropped: \(reason.name)", device: device, count: &badPayloads)
            }
        }
        return complete
    }

    /// Decodes a Record Access Control Point indication; one that does not decode is a bad payload.
    private func recordAccess(_ value: [UInt8], device: Device, badPayloads: inout Int) -> GHSRecordAccessControlPoint.Indication? {
        do {
            return try GHSRecordAccessControlPoint.indication(value)
        } catch {
            session.reportBadPayload(value, "\(error)", device: device, count: &badPayloads)
            return nil
        }
    }

    /// Logs a Record Access Control Point indication; a refusal is an error on the status board.
    private func log(_ indication: GHSRecordAccessControlPoint.Indication, device: Device) {
        switch indication {
        case .numberOfRecords(let count):
            context.logger.info("record access: \(count) stored observations", device: device.displayName)
        case .combinedReportResponse(let sent):
            context.logger.info("record access: \(sent) stored observations sent", device: device.displayName)
        case .response(let request, let code) where code == .success || code == .noRecordsFound:
            context.logger.info("record access: request 0x\(String(request, radix: 16)): \(code.name)", device: device.displayName)
        case .response(let request, let code):
            context.logger.warning("record access: request 0x\(String(request, radix: 16)) refused: \(code.name)", device: device.displayName)
            context.status.reportError("\(device.displayName): GHS record access: \(code.name)", at: context.clock.now())
        }
    }

    /// Logs a Record Access Control Point indication with what it means for the connection's
    /// stored download (``StoredDownload/take(_:)``): the count in `status`
    /// (`storedObservationsPending`, until the report's success), a refusal to count as a notice, fewer observations than
    /// announced as a warning (`storedObservationsMissing`). Returns true when the records are
    /// to be asked for now (``fetch(_:sensor:connection:device:)``).
    private func proceed(_ indication: GHSRecordAccessControlPoint.Indication, of download: StoredDownload?, device: Device) -> Bool {
        let name = device.displayName
        guard let download, let step = download.take(indication) else {
            log(indication, device: device)
            return false
        }
        switch step {
        case .report(let announced):
            session.setDetail("storedObservationsPending", String(announced))
            context.logger.info(
                "the sensor holds \(announced) stored observation\(announced == 1 ? "" : "s")\(Self.range(download.filter))", device: name)
            return true
        case .reportUncounted(let answer):
            context.logger.notice("the sensor did not count its stored observations (\(answer.name)): asking for them without a count", device: name)
            return true
        case .nothingStored:
            session.setDetail("storedObservationsPending", "0")
            if case .from(let first) = download.filter {
                context.logger.info("nothing stored since record \(first &- 1)", device: name)
            } else {
                context.logger.info("the sensor holds no stored observation", device: name)
            }
            return false
        case .reportEnded(let code, let announced, let received):
            log(indication, device: device)
            // More than announced is no fault: the sensor stored some between the count and the report.
            if code == .success, let announced, received < announced {
                context.logger.warning(
                    "the sensor announced \(announced) stored observations and sent \(received) (lost segments, or a miscount); the checkpoint passes the last one stored",
                    device: name)
                session.setDetail("storedObservationsMissing", "\(Int(announced) - received) of \(announced)")
            }
            return false
        case .aborted:
            log(indication, device: device)
            return false
        }
    }

    /// ` from record N`, or nothing for every record: the end of a log line about `filter`.
    private static func range(_ filter: GHSRecordAccessControlPoint.Filter) -> String {
        switch filter {
        case .all: ""
        case .from(let number): " from record \(number)"
        case .through(let number): " through record \(number)"
        }
    }

    /// How long a report of stored observations may go without a Stored Health Observations
    /// segment (measured from the request, then from each segment, on the injected clock's
    /// monotonic time) before the session asks the sensor to abort it.
    static let stallTimeout = Duration.seconds(30)

    /// The stored download's child task, beside the notification loop: asks for the records
    /// (RACP "report"), waits for the report's end, asking the sensor to abort it when it stalls
    /// (``stallTimeout``), and after a success shows nothing pending in `status` and erases what
    /// arrived when `deleteStoredObservations` asks. Returns when that is done; cancelled when
    /// the link ends.
    private func fetch(_ download: StoredDownload, sensor: String, connection: any BLEConnection, device: Device) async {
        let name = device.displayName
        do {
            try await connection.write(
                GHSRecordAccessControlPoint.Request.reportRecords(download.filter).encoded, to: GHSCharacteristic.recordAccessControlPoint.uuid,
                in: .genericHealthSensorService)
        } catch {
            // The link is going: the next connection asks again from the checkpoint.
            context.logger.notice("could not ask for the stored observations: \(error)", device: name)
            return
        }
        download.noteActivity(at: context.clock.uptime())
        if case .from(let first) = download.filter {
            context.logger.info("asked for the stored observations from record \(first)", device: name)
        } else {
            context.logger.info("asked for every stored observation", device: name)
        }
        enum Outcome: Sendable { case ended(GHSRecordAccessControlPoint.ResponseCode?), stalled }
        let outcome = await withTaskGroup(of: Outcome.self) { watch in
            watch.addTask { .ended(await download.reportEnd()) }
            watch.addTask { await stalled(download) ? .stalled : .ended(nil) }
            defer { watch.cancelAll() }
            return await watch.next() ?? .ended(nil)
        }
        switch outcome {
        case .stalled:
            await abort(download, connection: connection, device: device)
        case .ended(let code):
            guard code == .success else { return }
            // Set once the watch has ended: nothing on this connection waits for the sensor's memory.
            session.setDetail("storedObservationsPending", "0")
            guard configuration.deleteStoredObservations, let last = download.progress.lastRecord else { return }
            await erase(through: last, sensor: sensor, connection: connection, device: device)
        }
    }

    /// Returns true once no segment of `download`'s report has arrived for ``stallTimeout`` on
    /// the injected clock; false when cancelled first (the report ended, or the link).
    private func stalled(_ download: StoredDownload) async -> Bool {
        while true {
            let wait = download.progress.lastActivity + Self.stallTimeout - context.clock.uptime()
            guard wait > .zero else { return true }
            do { try await context.clock.sleep(for: wait) } catch { return false }
        }
    }

    /// Asks the sensor to abort a stalled report (RACP "abort", the null operator), counted in
    /// `status` (`storedDownloadsAborted`). Nothing else: the checkpoint passes the records that
    /// arrived, so the next connection asks for those after them.
    private func abort(_ download: StoredDownload, connection: any BLEConnection, device: Device) async {
        let name = device.displayName
        let after = download.progress.lastRecord.map { "after record \($0)" } ?? "before any record"
        do {
            try await connection.write(
                GHSRecordAccessControlPoint.Request.abort.encoded, to: GHSCharacteristic.recordAccessControlPoint.uuid,
                in: .genericHealthSensorService)
        } catch {
            context.logger.notice("could not ask the sensor to abort its stalled download (\(after)): \(error)", device: name)
            return
        }
        let aborted = abortedDownloads.add("stalled")["stalled"] ?? 0
        session.setDetail("storedDownloadsAborted", String(aborted))
        context.logger.warning(
            "the download of stored observations stalled \(after) (no segment for \(Self.stallTimeout)): asked the sensor to abort it; the next connection asks for the records after the last one stored",
            device: name)
    }

    /// How long the session waits for the store to commit the stored observations it downloaded
    /// before it erases them from the sensor, and how often it looks.
    static let commitWait = (polls: 120, every: Duration.milliseconds(250))

    /// Erases the sensor's stored observations up to record `last` (RACP "delete", operator "at
    /// most") once the store has committed them: the durable sink's checkpoint of the sensor
    /// reaches `last`. Durable before erased: when it does not within ``commitWait`` (a slow
    /// store, or no sink that stores checkpoints), nothing is erased and a warning says so.
    private func erase(through last: UInt32, sensor: String, connection: any BLEConnection, device: Device) async {
        for poll in 0..<Self.commitWait.polls {
            if poll > 0 {
                do { try await context.clock.sleep(for: Self.commitWait.every) } catch { return }  // the link ended
            }
            let committed: Checkpoint?
            do {
                committed = try await context.checkpoints.committedCheckpoint(namespace: Self.checkpointNamespace, key: sensor)
                    .map { try JSONDecoder().decode(Checkpoint.self, from: $0.payload) }
            } catch {
                context.logger.warning("cannot read the committed GHS checkpoint: \(error); the sensor keeps its stored observations", device: device.displayName)
                return
            }
            guard let committed, committed.lastRecordNumber >= last else { continue }
            do {
                try await connection.write(
                    GHSRecordAccessControlPoint.Request.deleteRecords(.through(recordNumber: last)).encoded,
                    to: GHSCharacteristic.recordAccessControlPoint.uuid, in: .genericHealthSensorService)
            } catch {
                // Asked again after the next download: it erases the same records and those after.
                context.logger.notice("could not ask the sensor to erase its stored observations: \(error)", device: device.displayName)
                return
            }
            context.logger.info("asked the sensor to erase its stored observations up to record \(last), which the store has committed", device: device.displayName)
            return
        }
        context.logger.warning(
            "the sensor keeps its stored observations: the store had not committed record \(last) within \(Self.commitWait.every * Self.commitWait.polls) (does a sink store checkpoints?)",
            device: device.displayName)
        session.setDetail("storedObservationsKept", "record \(last) not committed in time")
    }

    /// Logs a GHS Control Point indication; anything but success is an error on the status board.
    private func controlPoint(_ value: [UInt8], device: Device, badPayloads: inout Int) {
        do {
            let response = try GHSControlPoint.response(value)
            if response == .success {
                context.logger.info("control point: \(response.name)", device: device.displayName)
            } else {
                context.logger.warning("control point: \(response.name)", device: device.displayName)
                context.status.reportError("\(device.displayName): GHS Control Point: \(response.name)", at: context.clock.now())
            }
        } catch {
            session.reportBadPayload(value, "\(error)", device: device, count: &badPayloads)
        }
    }

    /// Decodes one observation and publishes its records; a stored one with its checkpoint.
    private func publish(
        _ bytes: [UInt8], recordNumber: UInt32?, sensor: String, device: Device, stamp: Metadata, receivedAt: Date,
        checkpoint: inout Checkpoint?, badPayloads: inout Int
    ) async {
        let observation: GHSObservation
        do {
            observation = try GHSObservationDecoder.decode(bytes, characteristic: recordNumber == nil ? .liveHealthObservations : .storedHealthObservations).observation
        } catch {
            session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
            // A stored one is passed: asked for again at each connection, it would only fail again.
            if let recordNumber { await commit([], recordNumber: recordNumber, sensor: sensor, checkpoint: &checkpoint) }
            return
        }
        let mapped = GHSObservationMapper.records(
            of: observation, device: device, sensor: sensor, recordNumber: recordNumber, receivedAt: receivedAt)
        for skipped in mapped.skipped {
            let count = notStored.add("observations")["observations"] ?? 0
            session.setDetail("observationsNotStored", String(count))
            context.logger.notice("observation not stored: \(skipped)", device: device.displayName)
        }
        let records = mapped.records.map { $0.stamped(stamp) }
        guard let recordNumber else {
            if !records.isEmpty { await context.publisher.publish(records) }
            return
        }
        await commit(records, recordNumber: recordNumber, sensor: sensor, checkpoint: &checkpoint)
    }

    /// Publishes a stored observation's records with the checkpoint that passes its record number.
    private func commit(_ records: [HealthRecord], recordNumber: UInt32, sensor: String, checkpoint: inout Checkpoint?) async {
        let next = Checkpoint(lastRecordNumber: max(checkpoint?.lastRecordNumber ?? recordNumber, recordNumber))
        checkpoint = next
        do {
            // The checkpoint commits with the observation's records: a crash loses neither or both.
            await context.publisher.publish(
                records, checkpoint: SourceCheckpoint(namespace: Self.checkpointNamespace, key: sensor, payload: try JSONEncoder().encode(next)))
        } catch {
            await context.publisher.publish(records)
        }
    }
}

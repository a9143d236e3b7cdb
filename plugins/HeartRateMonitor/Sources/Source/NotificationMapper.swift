import Foundation
import HealthModel
import SampleBus

/// Maps one connection's notifications to records: heart rate, heartbeat series, running speed,
/// stride length, distance and estimated steps. Owned by the session's task.
struct NotificationMapper {
    let session: DeviceSession
    let facts: DeviceSession.Facts
    var counters: DeviceSession.Counters
    var series: HeartbeatSeriesBuilder
    var running: RunningAggregator
    /// Whether "reset energy expended" was written for the current saturation.
    var energyResetSent = false
    /// The last energy-expended reading of this connection, the baseline of the next delta.
    var lastEnergy: (kilojoules: Int, date: Date)?
    /// The uuid, sync identifier and last sync version of the series being built, once a
    /// provisional version of it was published.
    var seriesSync: (id: SampleID, identifier: String, version: Int64)?
    let base: Metadata

    init(session: DeviceSession, facts: DeviceSession.Facts, counters: DeviceSession.Counters) {
        self.session = session
        self.facts = facts
        self.counters = counters
        series = HeartbeatSeriesBuilder(
            maximumBeats: session.configuration.heartbeatSeriesMaxBeats,
            maximumDuration: session.configuration.heartbeatSeriesSeconds)
        running = RunningAggregator(windowSeconds: session.configuration.runningWindowSeconds)
        var metadata = Metadata()
        metadata[.bleAddress] = .string(session.key)
        if let battery = facts.battery { metadata[.batteryLevel] = .integer(Int64(battery)) }
        base = metadata
    }

    private var heartMetadata: Metadata {
        var metadata = base
        metadata.heartRateSensorLocation = facts.location
        return metadata
    }

    mutating func heartRate(_ payload: [UInt8], at date: Date, connection: any BLEConnection) async {
        let measurement: HeartRateMeasurement
        do {
            measurement = try HeartRateMeasurementDecoder.decode(payload)
        } catch {
            counters.badPayloads += 1
            session.reportBadPayload(payload, error, device: facts.device)
            session.counted(counters)
            return
        }
        var records: [HealthRecord] = []
        if measurement.sensorContact == .notDetected || measurement.heartRate == 0 {
            // No skin contact, or 0 bpm ("no reading" from sensors without contact detection):
            // whatever value the sensor sends is not a heart rate, its RR intervals are not
            // beats, and the energy it adds meanwhile is estimated from no measurement. Count
            // it, break the series, and move the energy baseline without recording a delta.
            counters.droppedNoContact += 1
            session.context.status.recordsDropped(1)
            series.markGap()
            session.counted(counters)
            rebaselineEnergy(measurement, at: date)
        } else {
            append(.heartRate, Quantity(Double(measurement.heartRate), .countPerMinute), date, date, heartMetadata, to: &records)
            for chunk in series.add(rrIntervals: measurement.rrIntervals, receivedAt: date) {
                appendSeries(chunk, to: &records)
            }
            if !measurement.rrIntervals.isEmpty { appendProvisionalSeries(to: &records) }
            appendEnergy(measurement, at: date, to: &records)
        }
        await session.publish(records)
        await resetEnergyIfSaturated(measurement, connection: connection)
    }

    /// A reading without contact: its value becomes the baseline, so the energy the sensor
    /// counted without contact is attributed to no sample.
    private mutating func rebaselineEnergy(_ measurement: HeartRateMeasurement, at date: Date) {
        guard let energy = measurement.energyExpended, !measurement.isEnergyExpendedSaturated else { return }
        lastEnergy = (energy, date)
    }

    /// Turns the cumulative Energy Expended field (kJ since the last reset, HRS v1.0 §3.1.1.3)
    /// into `activeEnergyBurned` deltas between readings of one connection.
    ///
    /// A drop means the counter was reset (by our Control Point write at saturation, or by the
    /// sensor rebooting): the new value is the energy since that reset, so it is the delta. A
    /// saturated value (0xFFFF) says nothing about how much more was spent, so it adds nothing
    /// and keeps the baseline. The first reading of a connection is only a baseline: energy spent
    /// while disconnected is not known.
    private mutating func appendEnergy(_ measurement: HeartRateMeasurement, at date: Date, to records: inout [HealthRecord]) {
        guard let energy = measurement.energyExpended, !measurement.isEnergyExpendedSaturated else { return }
        defer { lastEnergy = (energy, date) }
        guard let last = lastEnergy, date > last.date else { return }
        let delta = energy >= last.kilojoules ? energy - last.kilojoules : energy
        guard delta > 0 else { return }
        append(.activeEnergyBurned, Quantity(Double(delta), .kilojoule), last.date, date, base, to: &records)
    }

    private mutating func resetEnergyIfSaturated(_ measurement: HeartRateMeasurement, connection: any BLEConnection) async {
        guard measurement.isEnergyExpendedSaturated else {
            if measurement.energyExpended != nil { energyResetSent = false }
            return
        }
        guard facts.hasControlPoint, !energyResetSent else { return }
        energyResetSent = true
        do {
            // Heart Rate Control Point value 0x01: Reset Energy Expended (HRS v1.0 §3.3).
            try await connection.write([0x01], to: .heartRateControlPoint, in: .heartRateService)
            session.context.logger.info("energy expended saturated at 0xFFFF kJ; reset it", device: facts.device.displayName)
        } catch {
            session.context.logger.warning("resetting energy expended failed: \(error)", device: facts.device.displayName)
            session.context.status.reportError("\(session.key): reset energy expended failed: \(error)", at: session.context.clock.now())
        }
    }

    mutating func running(_ payload: [UInt8], at date: Date) async {
        let measurement: RSCMeasurement
        do {
            measurement = try RSCMeasurementDecoder.decode(payload)
        } catch {
            counters.badPayloads += 1
            session.reportBadPayload(payload, error, device: facts.device)
            session.counted(counters)
            return
        }
        let output = running.add(measurement, at: date)
        var records: [HealthRecord] = []
        append(.runningSpeed, Quantity(output.speed, .meterPerSecond), date, date, base, to: &records)
        if let stride = output.strideLength, stride > 0 {
            append(.runningStrideLength, Quantity(stride, .meter), date, date, base, to: &records)
        }
        if output.counterReset {
            session.context.logger.notice("total distance counter reset; re-baselined", device: facts.device.displayName)
        }
        if let window = output.window { appendWindow(window, to: &records) }
        await session.publish(records)
    }

    /// Publishes what the segment still holds; the next beat will be `precededByGap`.
    mutating func finishSegment(at date: Date) async {
        var records: [HealthRecord] = []
        if let chunk = series.finishSegment() { appendSeries(chunk, to: &records) }
        if let window = running.finishSegment() { appendWindow(window, to: &records) }
        await session.publish(records)
    }

    /// A finished chunk: the last version of the series. When provisional versions of it were
    /// published, it keeps their uuid and sync identifier with the next sync version, and drops
    /// the provisional mark, so it replaces them.
    private mutating func appendSeries(_ chunk: HeartbeatSeriesBuilder.Chunk, to records: inout [HealthRecord]) {
        var metadata = heartMetadata
        var id: SampleID
        if let provisional = seriesSync {
            id = provisional.id
            metadata.syncIdentifier = provisional.identifier
            metadata.syncVersion = provisional.version + 1
            seriesSync = nil
        } else {
            id = session.ids.next()
        }
        do {
            records.append(.heartbeatSeries(try HeartbeatSeriesSample(
                id: id, start: chunk.start, end: chunk.end, beats: chunk.beats, device: facts.device, metadata: metadata)))
        } catch {
            session.context.logger.error("internal: heartbeat series rejected: \(error)", device: facts.device.displayName)
        }
    }

    /// Publishes the series being built as it stands: the same uuid every time, metadata
    /// `healthgate.provisional` and the next `syncVersion` (HealthKit's sync-identifier rule). A
    /// store keeps the highest version, appending the beats that are new, so a crash loses only
    /// the beats still in a sink's batch window.
    private mutating func appendProvisionalSeries(to records: inout [HealthRecord]) {
        guard let chunk = series.pendingChunk else { return }
        let sync: (id: SampleID, identifier: String, version: Int64)
        if let previous = seriesSync {
            sync = (previous.id, previous.identifier, previous.version + 1)
        } else {
            // The device and the series' start name it: a chunk's start never moves, and one
            // device starts no two series at the same microsecond.
            let identity = facts.device.localIdentifier ?? session.key
            let start = Int64((chunk.start.timeIntervalSince1970 * 1_000_000).rounded())
            sync = (session.ids.next(), "heartbeat-series:\(identity):\(start)", 1)
        }
        var metadata = heartMetadata
        metadata.syncIdentifier = sync.identifier
        metadata.syncVersion = sync.version
        metadata[.provisional] = .bool(true)
        do {
            records.append(.heartbeatSeries(try HeartbeatSeriesSample(
                id: sync.id, start: chunk.start, end: chunk.end, beats: chunk.beats, device: facts.device,
                metadata: metadata)))
            seriesSync = sync
        } catch {
            session.context.logger.error("internal: heartbeat series rejected: \(error)", device: facts.device.displayName)
        }
    }

    private func appendWindow(_ window: RunningAggregator.Window, to records: inout [HealthRecord]) {
        if window.distance > 0 {
            append(.distanceWalkingRunning, Quantity(window.distance, .meter), window.start, window.end, base, to: &records)
        }
        if window.steps > 0 {
            var metadata = base
            metadata[.estimated] = .bool(true)
            append(.stepCount, Quantity(Double(window.steps), .count), window.start, window.end, metadata, to: &records)
        }
    }

    private func append(
        _ type: QuantityType, _ quantity: Quantity, _ start: Date, _ end: Date, _ metadata: Metadata,
        to records: inout [HealthRecord]
    ) {
        do {
            records.append(.quantity(try QuantitySample(
                id: session.ids.next(), type: type, quantity: quantity, start: start, end: end,
                device: facts.device, metadata: metadata)))
        } catch {
            session.context.logger.error("internal: \(type) sample rejected: \(error)", device: facts.device.displayName)
        }
    }
}

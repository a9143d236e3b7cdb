import BLEProfileKit
import FoundationEssentials
import HealthModel

/// Maps one connection's notifications to records: heart rate, heartbeat series, running speed,
/// stride length, distance and estimated steps. Pure apart from drawing sample ids: every method
/// returns the records to publish and the effects the session carries out (logging, status, the
/// Control Point write), so tests can check the mapping without a transport or a bus. Owned by
/// the session's task.
struct NotificationMapper {
    /// What the session does besides publishing the records, in this order.
    enum Effect {
        /// A payload that does not decode: log it with the device and report it in status.
        case badPayload([UInt8], any Error)
        /// A reading without skin contact was dropped: count it in status.
        case droppedNoContact
        /// ``counters`` changed: show them in status.
        case countersChanged
        /// Log at notice level.
        case notice(String)
        /// A sample the model refused: a bug, logged as an error.
        case internalError(String)
        /// Energy Expended saturated at 0xFFFF kJ: write "reset" (0x01) to the Heart Rate Control
        /// Point (HRS v1.0 §3.3), after the records are published.
        case resetEnergyExpended
    }

    /// Records to publish and effects to carry out.
    struct Output {
        var records: [HealthRecord] = []
        var effects: [Effect] = []
    }

    let facts: DeviceSession.Facts
    var counters: DeviceSession.Counters
    var series: HeartbeatSeriesBuilder
    var running: RunningAggregator
    /// Whether "reset energy expended" was asked for the current saturation.
    var energyResetSent = false
    /// The last energy-expended reading of this connection, the baseline of the next delta.
    var lastEnergy: (kilojoules: Int, date: Date)?
    /// The versions the series are published under, provisional and finished.
    var seriesVersions: HeartbeatSeriesVersionTracker
    let base: Metadata
    /// The device's upper-case address: metadata, and the series' identity without a local id
    /// (the device and a series' start name the series: ``HeartbeatSeriesVersionTracker``).
    let key: String
    let ids: SampleIDGenerator

    init(
        configuration: HeartRateProfileConfiguration, key: String, ids: SampleIDGenerator,
        facts: DeviceSession.Facts, counters: DeviceSession.Counters
    ) {
        self.facts = facts
        self.counters = counters
        self.key = key
        self.ids = ids
        series = HeartbeatSeriesBuilder(
            maximumBeats: configuration.heartbeatSeriesMaxBeats,
            maximumDuration: configuration.heartbeatSeriesSeconds, notBefore: counters.lastBeat)
        running = RunningAggregator(windowSeconds: configuration.runningWindowSeconds)
        seriesVersions = HeartbeatSeriesVersionTracker(identity: facts.device.localIdentifier ?? key, ids: ids)
        var metadata = facts.metadata
        metadata[.bleAddress] = .string(key)
        base = metadata
    }

    /// The gateway's wall clock stepped by `seconds`: every date the mapper holds moves with it.
    mutating func clockStepped(by seconds: Double) {
        series.clockStepped(by: seconds)
        running.clockStepped(by: seconds)
        lastEnergy = lastEnergy.map { ($0.kilojoules, $0.date.addingTimeInterval(seconds)) }
        counters.lastBeat = counters.lastBeat?.addingTimeInterval(seconds)
    }

    private var heartMetadata: Metadata {
        var metadata = base
        metadata.heartRateSensorLocation = facts.location
        return metadata
    }

    mutating func heartRate(_ payload: [UInt8], at date: Date) -> Output {
        var output = Output()
        let measurement: HeartRateMeasurement
        do {
            measurement = try HeartRateMeasurementDecoder.decode(payload)
        } catch {
            counters.badPayloads += 1
            output.effects = [.badPayload(payload, error), .countersChanged]
            return output
        }
        if measurement.sensorContact == .notDetected || measurement.heartRate == 0 {
            // No skin contact, or 0 bpm ("no reading" from sensors without contact detection):
            // whatever value the sensor sends is not a heart rate, its RR intervals are not
            // beats, and the energy it adds meanwhile is estimated from no measurement. Count
            // it, break the series, and move the energy baseline without recording a delta.
            counters.droppedNoContact += 1
            output.effects += [.droppedNoContact, .countersChanged]
            series.markGap()
            rebaselineEnergy(measurement, at: date)
        } else {
            append(.heartRate, Quantity(Double(measurement.heartRate), .countPerMinute), date, date, heartMetadata, to: &output)
            let overlapping = series.overlappingBeats
            for chunk in series.add(rrIntervals: measurement.rrIntervals, receivedAt: date) {
                appendSeries(chunk, to: &output)
            }
            counters.lastBeat = series.lastBeat
            if series.overlappingBeats != overlapping {
                counters.overlappingBeats += series.overlappingBeats - overlapping
                output.effects.append(.countersChanged)
            }
            if !measurement.rrIntervals.isEmpty { appendProvisionalSeries(to: &output) }
            appendEnergy(measurement, at: date, to: &output)
        }
        if needsEnergyReset(measurement) { output.effects.append(.resetEnergyExpended) }
        return output
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
    private mutating func appendEnergy(_ measurement: HeartRateMeasurement, at date: Date, to output: inout Output) {
        guard let energy = measurement.energyExpended, !measurement.isEnergyExpendedSaturated else { return }
        defer { lastEnergy = (energy, date) }
        guard let last = lastEnergy, date > last.date else { return }
        let delta = energy >= last.kilojoules ? energy - last.kilojoules : energy
        guard delta > 0 else { return }
        append(.activeEnergyBurned, Quantity(Double(delta), .kilojoule), last.date, date, base, to: &output)
    }

    /// Whether to ask for a reset: once per saturation, and only where the Control Point exists.
    private mutating func needsEnergyReset(_ measurement: HeartRateMeasurement) -> Bool {
        guard measurement.isEnergyExpendedSaturated else {
            if measurement.energyExpended != nil { energyResetSent = false }
            return false
        }
        guard facts.hasControlPoint, !energyResetSent else { return false }
        energyResetSent = true
        return true
    }

    mutating func running(_ payload: [UInt8], at date: Date) -> Output {
        var output = Output()
        let measurement: RSCMeasurement
        do {
            measurement = try RSCMeasurementDecoder.decode(payload)
        } catch {
            counters.badPayloads += 1
            output.effects = [.badPayload(payload, error), .countersChanged]
            return output
        }
        let reading = running.add(measurement, at: date)
        append(.runningSpeed, Quantity(reading.speed, .meterPerSecond), date, date, base, to: &output)
        if let stride = reading.strideLength, stride > 0 {
            append(.runningStrideLength, Quantity(stride, .meter), date, date, base, to: &output)
        }
        if reading.counterReset {
            output.effects.append(.notice("total distance counter reset; re-baselined"))
        }
        if let window = reading.window { appendWindow(window, to: &output) }
        return output
    }

    /// What the segment still holds; the next beat will be `precededByGap`.
    mutating func finishSegment(at date: Date) -> Output {
        var output = Output()
        if let chunk = series.finishSegment() { appendSeries(chunk, to: &output) }
        if let window = running.finishSegment() { appendWindow(window, to: &output) }
        return output
    }

    /// A finished chunk: the last version of the series, replacing its provisional versions
    /// (``HeartbeatSeriesVersionTracker``).
    private mutating func appendSeries(_ chunk: HeartbeatSeriesBuilder.Chunk, to output: inout Output) {
        do {
            output.records.append(.heartbeatSeries(try seriesVersions.finished(chunk, device: facts.device, metadata: heartMetadata)))
        } catch {
            output.effects.append(.internalError("heartbeat series rejected: \(error)"))
        }
    }

    /// Publishes the series being built as it stands, as its next provisional version when one is
    /// due (``HeartbeatSeriesVersionTracker``'s cadence): a store keeps the highest version.
    private mutating func appendProvisionalSeries(to output: inout Output) {
        guard let chunk = series.pendingChunk else { return }
        do {
            if let version = try seriesVersions.provisional(chunk, device: facts.device, metadata: heartMetadata) {
                output.records.append(.heartbeatSeries(version))
            }
        } catch {
            output.effects.append(.internalError("heartbeat series rejected: \(error)"))
        }
    }

    private func appendWindow(_ window: RunningAggregator.Window, to output: inout Output) {
        if window.distance > 0 {
            append(.distanceWalkingRunning, Quantity(window.distance, .meter), window.start, window.end, base, to: &output)
        }
        if window.steps > 0 {
            var metadata = base
            metadata[.estimated] = .bool(true)
            append(.stepCount, Quantity(Double(window.steps), .count), window.start, window.end, metadata, to: &output)
        }
    }

    private func append(
        _ type: QuantityType, _ quantity: Quantity, _ start: Date, _ end: Date, _ metadata: Metadata,
        to output: inout Output
    ) {
        do {
            output.records.append(.quantity(try QuantitySample(
                id: ids.next(), type: type, quantity: quantity, start: start, end: end,
                device: facts.device, metadata: metadata)))
        } catch {
            output.effects.append(.internalError("\(type) sample rejected: \(error)"))
        }
    }
}

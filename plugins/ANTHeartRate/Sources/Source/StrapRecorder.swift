import ANTProtocol
import FoundationEssentials
import HealthModel

/// One strap's pages → records: a `heartRate` sample per broadcast carrying a new beat, the
/// heartbeat series (the gap-aware ``HeartbeatSeriesBuilder`` every heart-rate source uses,
/// published as it grows through the ``HeartbeatSeriesVersionTracker`` the Bluetooth straps
/// use), and the device facts from pages 2, 3 and 7 (the serial number in the samples' metadata).
/// Pure apart from drawing sample ids; dates come in with the pages. Owned by the stick
/// session's task.
struct StrapRecorder {
    /// What one page produced.
    struct Output {
        var records: [HealthRecord] = []
        /// The strap's new checkpoint, when a new beat was recorded.
        var checkpoint: StrapCheckpoint?
        /// A sample the model refused (a bug), to log.
        var problems: [String] = []
    }

    let identifier: ANTDeviceIdentifier
    let ids: SampleIDGenerator
    private(set) var device: Device
    private var metadata = Metadata()
    private var toggles = ANTPageToggleTracker()
    private var beats: ANTBeatTracker
    private var series: HeartbeatSeriesBuilder
    private var seriesVersions: HeartbeatSeriesVersionTracker
    /// When the last broadcast arrived.
    private(set) var lastHeard: Date
    /// Whether the strap is lost (silent for the timeout).
    private(set) var isLost = false
    /// Beats recorded (heart-rate samples published).
    private(set) var beatsRecorded = 0
    /// Beats the strap counted that no received broadcast carried.
    private(set) var beatsMissed = 0
    /// The last heart rate recorded.
    private(set) var lastHeartRate: UInt8?
    /// The battery, as page 7 last said.
    private(set) var battery: ANTBatteryStatus?
    /// The serial number, once page 2 gave its upper half.
    private(set) var serialNumber: ANTSerialNumber?

    /// A recorder for a strap first heard at `date`; `restored` is the checkpoint the store
    /// holds for it: a recent one (the strap's 16-bit beat time has not wrapped since) makes a
    /// page repeating its beat not new; any keeps the series from placing a beat at or before its
    /// `lastBeat`. The first new beat starts the series with a gap
    /// (``ANTBeatTracker/init(storedBeatTime:storedBeatCount:)`` says why).
    init(
        identifier: ANTDeviceIdentifier, ids: SampleIDGenerator, seriesMaxBeats: Int, seriesSeconds: Double,
        restored: StrapCheckpoint?, at date: Date
    ) {
        self.identifier = identifier
        self.ids = ids
        seriesVersions = HeartbeatSeriesVersionTracker(identity: identifier.description, ids: ids)
        device = Device(
            name: "ANT+ heart-rate strap \(identifier.deviceNumber)", localIdentifier: identifier.description,
            radioIdentifier: identifier.description)
        if let restored, date.timeIntervalSince(restored.received) < Self.restoreWindow, date >= restored.received {
            beats = ANTBeatTracker(storedBeatTime: restored.beatTime, storedBeatCount: restored.beatCount)
        } else {
            beats = ANTBeatTracker()
        }
        series = HeartbeatSeriesBuilder(maximumBeats: seriesMaxBeats, maximumDuration: seriesSeconds, notBefore: restored?.lastBeat)
        lastHeard = date
    }

    /// A checkpoint older than this says nothing about the strap's counters: the 16-bit beat
    /// time wraps every 64 s.
    static let restoreWindow: TimeInterval = 60

    /// Records one page received at `date`. A page that does not decode cannot happen (it is
    /// always 8 bytes here).
    mutating func receive(page bytes: [UInt8], at date: Date) -> Output {
        var output = Output()
        lastHeard = date
        if isLost { isLost = false }
        guard bytes.count == 8 else { return output }
        let trusted = toggles.observe(toggle: bytes[0] & 0x80 != 0)
        guard let page = try? ANTHeartRatePage(bytes: bytes, pageSpecificTrusted: trusted) else { return output }
        learn(page.content)
        guard let beat = beats.observe(beatTime: page.beatTime, beatCount: page.beatCount, previousBeatTime: page.previousBeatTime)
        else { return output }
        guard let heartRate = page.heartRate else {
            // No valid heart rate (no skin contact yet): not a beat to record; the series breaks.
            series.markGap()
            return output
        }
        beatsMissed += beat.missedBeats
        if beat.missedBeats > 0 || beat.rrInterval == nil { series.markGap() }
        do {
            output.records.append(.quantity(try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(Double(heartRate), .countPerMinute), start: date, end: date,
                device: device, metadata: metadata)))
        } catch {
            output.problems.append("heart rate sample rejected: \(error)")
        }
        beatsRecorded += 1
        lastHeartRate = heartRate
        if let rr = beat.rrInterval {
            for chunk in series.add(rrIntervals: [rr], receivedAt: date) { appendSeries(chunk, to: &output) }
            appendProvisionalSeries(to: &output)
        }
        output.checkpoint = StrapCheckpoint(beatTime: beat.beatTime, beatCount: beat.beatCount, lastBeat: series.lastBeat, received: date)
        return output
    }

    /// The strap has been silent since ``lastHeard``: it is lost. Publishes the series being
    /// built; the next beat starts a new segment and counts from scratch.
    mutating func lose() -> Output {
        var output = Output()
        isLost = true
        if let chunk = series.finishSegment() { appendSeries(chunk, to: &output) }
        toggles.reset()
        beats.reset()
        return output
    }

    /// The wall clock stepped by `seconds`.
    mutating func clockStepped(by seconds: Double) {
        series.clockStepped(by: seconds)
        lastHeard = lastHeard.addingTimeInterval(seconds)
    }

    /// Page 2, 3 and 7 facts become the device's and the samples' metadata.
    private mutating func learn(_ content: ANTHeartRatePage.Content) {
        switch content {
        case .manufacturer(let id, let upperSerialBits):
            let name = ANTManufacturer(id: UInt16(id)).description
            if device.manufacturer != name { device.manufacturer = name }
            serialNumber = ANTSerialNumber(upperBits: upperSerialBits, of: identifier)
            metadata.deviceSerialNumber = serialNumber?.description
        case .product(let hardware, let software, let model):
            let (hw, sw, mo) = (String(hardware), String(software), String(model))
            if device.hardwareVersion != hw { device.hardwareVersion = hw }
            if device.softwareVersion != sw { device.softwareVersion = sw }
            if device.model != mo { device.model = mo }
        case .battery(let status):
            battery = status
            if let level = status.level { metadata[.batteryLevel] = .integer(Int64(level)) }
        case .defaultData, .operatingTime, .previousBeat, .swimInterval, .capabilities, .legacy, .unknown:
            break
        }
    }

    /// A finished chunk: the last version of the series, replacing its provisional versions.
    private mutating func appendSeries(_ chunk: HeartbeatSeriesBuilder.Chunk, to output: inout Output) {
        do {
            output.records.append(.heartbeatSeries(try seriesVersions.finished(chunk, device: device, metadata: metadata)))
        } catch {
            output.problems.append("heartbeat series rejected: \(error)")
        }
    }

    /// The series being built as it stands, as its next provisional version when one is due (the
    /// tracker's cadence): the store keeps the newest.
    private mutating func appendProvisionalSeries(to output: inout Output) {
        guard let chunk = series.pendingChunk else { return }
        do {
            if let version = try seriesVersions.provisional(chunk, device: device, metadata: metadata) {
                output.records.append(.heartbeatSeries(version))
            }
        } catch {
            output.problems.append("heartbeat series rejected: \(error)")
        }
    }
}

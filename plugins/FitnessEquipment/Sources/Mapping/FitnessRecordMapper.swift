public import FoundationEssentials
public import HealthModel

/// Turns one connection's fitness-equipment notifications into HealthKit-style samples. Pure: the
/// identifiers come from the generator it is given, the times from the caller; no I/O, no clock.
/// One mapper per connection: it holds the counter baselines, the pending split Fitness Machine
/// record and the last total distance of each characteristic.
///
/// - CSC and Cycling Power: `cyclingSpeed` and `distanceCycling` from wheel revolutions and the
///   configured circumference, `cyclingCadence` from crank revolutions (through
///   ``CyclingSpeedCadenceCalculator``: rollovers, a stopped wheel or crank reported once as 0,
///   counter jumps discarded), and `cyclingPower` from every Cycling Power Measurement. A
///   distance sample covers the time its wheel revolutions took, ending when it arrived.
/// - Fitness Machine data, reassembled across notifications (an incomplete record still gives the
///   fields it has): a treadmill gives `runningSpeed`, `distanceWalkingRunning` and
///   `runningPower`; an indoor bike `cyclingSpeed`, `cyclingCadence`, `cyclingPower` and
///   `distanceCycling`; a rower `rowingStrokeRate`, `rowingSpeed` (from its pace), `rowingPower`
///   and `distanceRowing`. Distances are the growth of the machine's Total Distance since the
///   previous record that had it; the first record of a connection is only the baseline, and a
///   total that went down (the machine was reset) counts from zero.
/// - Negative power (a sint16 some meters send while back-pedalling) is no power output and
///   gives no sample.
public struct FitnessRecordMapper: Sendable {
    /// The wheel circumference in metres.
    public var wheelCircumference: Double { csc.wheelCircumference }

    private let ids: SampleIDGenerator
    private let device: Device?
    private let metadata: Metadata
    private var csc: CyclingSpeedCadenceCalculator
    private var power: CyclingSpeedCadenceCalculator
    private var machines: [FitnessCharacteristic: FitnessMachineReassembler]
    /// Per measurement characteristic: when its last distance sample ended.
    private var distanceEnds: [FitnessCharacteristic: Date] = [:]
    /// Per Fitness Machine characteristic: the last Total Distance (m) and when it arrived.
    private var totals: [FitnessCharacteristic: (meters: Double, date: Date)] = [:]

    /// Creates a mapper for one connection.
    /// - Parameters:
    ///   - wheelCircumference: metres, for CSC and Cycling Power wheel revolutions.
    ///   - stopTimeout: seconds of a repeated event time after which a wheel or crank is stopped.
    ///   - metadata: written on every sample (the source's BLE address, battery level).
    /// - Throws: ``CyclingSpeedCadenceCalculator/InvalidCircumference`` unless the circumference
    ///   is positive and finite.
    public init(
        wheelCircumference: Double, stopTimeout: Double = 3, ids: SampleIDGenerator, device: Device?,
        metadata: Metadata = Metadata()
    ) throws(CyclingSpeedCadenceCalculator.InvalidCircumference) {
        csc = try CyclingSpeedCadenceCalculator(
            profile: .cyclingSpeedAndCadence, wheelCircumference: wheelCircumference, stopTimeout: stopTimeout)
        power = try CyclingSpeedCadenceCalculator(
            profile: .cyclingPower, wheelCircumference: wheelCircumference, stopTimeout: stopTimeout)
        machines = [
            .treadmillData: FitnessMachineReassembler(layout: .treadmill),
            .indoorBikeData: FitnessMachineReassembler(layout: .indoorBike),
            .rowerData: FitnessMachineReassembler(layout: .rower),
        ]
        self.ids = ids
        self.device = device
        self.metadata = metadata
    }

    /// Maps one notification of `characteristic` that arrived at `date`. Characteristics that
    /// carry no measurement (features, status, sensor location) give nothing.
    /// - Throws: the decoder's error when the payload does not decode; the mapper's state is then
    ///   unchanged.
    public mutating func map(
        _ payload: [UInt8], of characteristic: FitnessCharacteristic, at date: Date
    ) throws(FitnessDecodingError) -> [QuantitySample] {
        switch characteristic {
        case .cscMeasurement:
            let measurement = try CSCMeasurementDecoder.decode(payload)
            let result = csc.update(measurement, receivedAt: date.timeIntervalSince1970)
            return cycling(result, of: characteristic, at: date)
        case .cyclingPowerMeasurement:
            let measurement = try CyclingPowerMeasurementDecoder.decode(payload)
            let result = power.update(measurement, receivedAt: date.timeIntervalSince1970)
            var samples: [QuantitySample] = []
            if measurement.instantaneousPower >= 0 {
                append(.cyclingPower, Double(measurement.instantaneousPower), .watt, date, date, to: &samples)
            }
            return samples + cycling(result, of: characteristic, at: date)
        case .treadmillData, .indoorBikeData, .rowerData:
            guard var reassembler = machines[characteristic] else { return [] }
            let records = try reassembler.append(payload)
            machines[characteristic] = reassembler
            return records.flatMap { machine($0.data, at: date) }
        case .cscFeature, .cyclingPowerFeature, .sensorLocation, .fitnessMachineFeature, .fitnessMachineStatus:
            return []
        }
    }

    /// The link dropped at `date`: emits what a pending split record holds, and forgets every
    /// baseline, since counters and totals read after a reconnect cannot be compared with the
    /// ones before it.
    public mutating func linkLost(at date: Date) -> [QuantitySample] {
        var samples: [QuantitySample] = []
        for characteristic in [FitnessCharacteristic.treadmillData, .indoorBikeData, .rowerData] {
            guard var reassembler = machines[characteristic] else { continue }
            if let record = reassembler.flush() { samples += machine(record.data, at: date) }
            machines[characteristic] = reassembler
        }
        csc.reset()
        power.reset()
        distanceEnds = [:]
        totals = [:]
        return samples
    }

    // MARK: Cycling Speed and Cadence, Cycling Power

    private mutating func cycling(
        _ result: CyclingSpeedCadenceCalculator.Result, of characteristic: FitnessCharacteristic, at date: Date
    ) -> [QuantitySample] {
        var samples: [QuantitySample] = []
        if let speed = result.speed {
            append(.cyclingSpeed, speed, .meterPerSecond, date, date, to: &samples)
        }
        if case .moving(_, let seconds) = result.wheel, let distance = result.distance, distance > 0 {
            // The revolutions took `seconds` of sensor time and ended about when the
            // notification arrived; the interval never reaches back into the previous sample's.
            var start = date.addingTimeInterval(-seconds)
            if let previous = distanceEnds[characteristic], previous > start { start = min(previous, date) }
            append(.distanceCycling, distance, .meter, start, date, to: &samples)
            distanceEnds[characteristic] = date
        }
        if let cadence = result.cadence {
            append(.cyclingCadence, cadence, .countPerMinute, date, date, to: &samples)
        }
        return samples
    }

    // MARK: Fitness Machine

    private mutating func machine(_ data: FitnessMachineData, at date: Date) -> [QuantitySample] {
        var samples: [QuantitySample] = []
        switch data.characteristic {
        case .treadmillData:
            let record = TreadmillData(data)
            append(.runningSpeed, record.instantaneousSpeed, .meterPerSecond, at: date, to: &samples)
            distance(.distanceWalkingRunning, record.totalDistance, of: data.characteristic, at: date, to: &samples)
            append(.runningPower, nonNegative(record.powerOutput), .watt, at: date, to: &samples)
        case .indoorBikeData:
            let record = IndoorBikeData(data)
            append(.cyclingSpeed, record.instantaneousSpeed, .meterPerSecond, at: date, to: &samples)
            append(.cyclingCadence, record.instantaneousCadence, .countPerMinute, at: date, to: &samples)
            append(.cyclingPower, nonNegative(record.instantaneousPower), .watt, at: date, to: &samples)
            distance(.distanceCycling, record.totalDistance, of: data.characteristic, at: date, to: &samples)
        case .rowerData:
            let record = RowerData(data)
            append(.rowingStrokeRate, record.strokeRate, .countPerMinute, at: date, to: &samples)
            append(.rowingSpeed, record.instantaneousSpeed, .meterPerSecond, at: date, to: &samples)
            append(.rowingPower, nonNegative(record.instantaneousPower), .watt, at: date, to: &samples)
            distance(.distanceRowing, record.totalDistance, of: data.characteristic, at: date, to: &samples)
        default:
            break
        }
        return samples
    }

    private mutating func distance(
        _ type: QuantityType, _ total: Double?, of characteristic: FitnessCharacteristic, at date: Date,
        to samples: inout [QuantitySample]
    ) {
        guard let total else { return }
        defer { totals[characteristic] = (total, date) }
        guard let last = totals[characteristic], date > last.date else { return }
        let delta = total >= last.meters ? total - last.meters : total
        guard delta > 0 else { return }
        append(type, delta, .meter, last.date, date, to: &samples)
    }

    /// A machine's power figure, or nil for a negative one, which makes no sample.
    private func nonNegative(_ watts: Double?) -> Double? {
        guard let watts, watts >= 0 else { return nil }
        return watts
    }

    /// Appends a sample at the instant `date` when the record carries the field (`value`).
    private func append(
        _ type: QuantityType, _ value: Double?, _ unit: HealthUnit, at date: Date, to samples: inout [QuantitySample]
    ) {
        guard let value else { return }
        append(type, value, unit, date, date, to: &samples)
    }

    private func append(
        _ type: QuantityType, _ value: Double, _ unit: HealthUnit, _ start: Date, _ end: Date,
        to samples: inout [QuantitySample]
    ) {
        // Every type here is paired with its canonical unit, every value is finite and every
        // interval runs forwards, so the initializer accepts each sample.
        guard let sample = try? QuantitySample(
            id: ids.next(), type: type, quantity: Quantity(value, unit), start: start, end: end, device: device,
            metadata: metadata)
        else { return }
        samples.append(sample)
    }
}

import GATTDecoding
public import FoundationEssentials
public import HealthModel

/// Turns decoded health-profile measurements into records. Pure: the identifiers come from the
/// generator it is given, the times from the context; no I/O, no clock.
///
/// - Times: a record's time is its device time stamp corrected by the device clock's offset when
///   both are known (the offset is kept in metadata), else the time the gateway received it. When
///   the gateway set the clock during the connection, ``DeviceClockSet`` says which offset a time
///   stamp takes.
/// - Sync identifiers: a record a device keeps and may send again (a glucose record, by its
///   sequence number; a reading with a device time stamp, by that time stamp and user) gets
///   `syncIdentifier` = device identity / kind / key and `syncVersion` 1, and a uuid derived from
///   them (``id(for:member:)``), so the store and every repository keep it once however often it
///   is downloaded.
/// - Special values (NaN, NRes, ±INFINITY, reserved) never become samples.
public struct ClinicalRecordMapper: Sendable {
    /// What the mapper needs beyond the payload.
    public struct Context: Sendable {
        /// The device; its `localIdentifier` (the BLE address) is its identity in sync identifiers.
        public var device: Device
        /// When the gateway received the payload.
        public var receivedAt: Date
        /// Seconds to add to a device time stamp, read as if it were UTC, to get the gateway's
        /// time (from the device's Current Time); nil when unknown.
        public var deviceClockOffset: TimeInterval?
        /// The user's height in metres, from the profile: BMI for a scale that sends none.
        public var profileHeight: Double?
        /// When the gateway set the device's clock during this connection: time stamps of the
        /// new clock take its offset instead of ``deviceClockOffset``.
        public var clockSet: DeviceClockSet?
        /// The gateway's clock is not synchronised, so ``deviceClockOffset`` is 0 by trust in the
        /// device's clock: records dated by a time stamp say so (``MetadataKey/deviceClock``) and
        /// keep their dates when the gateway's clock steps.
        public var datesFromDeviceClock = false

        public init(
            device: Device, receivedAt: Date, deviceClockOffset: TimeInterval? = nil, profileHeight: Double? = nil,
            clockSet: DeviceClockSet? = nil
        ) {
            self.device = device
            self.receivedAt = receivedAt
            self.deviceClockOffset = deviceClockOffset
            self.profileHeight = profileHeight
            self.clockSet = clockSet
        }

        /// The offset that moves `timestamp` to the gateway's time: the set clock's when the
        /// device stamped it after the set, else the one read at connection; nil when unknown.
        public func offset(for timestamp: DeviceTimestamp) -> TimeInterval? {
            if let clockSet, clockSet.stampedAfter(timestamp, receivedAt: receivedAt) { return clockSet.offset }
            return deviceClockOffset
        }
    }

    /// Metadata keys the mapper writes.
    public static let deviceTimestampKey = MetadataKey.deviceTimestamp
    public static let clockOffsetKey = MetadataKey("healthgate.deviceClockOffsetSeconds")
    public static let userIndexKey = MetadataKey.userIndex
    public static let bmiComputedKey = MetadataKey("healthgate.bmiComputedFromProfileHeight")
    public static let meanArterialPressureKey = MetadataKey.meanArterialPressure
    public static let measurementStatusKey = MetadataKey("healthgate.measurementStatus")
    public static let temperatureTypeKey = MetadataKey("healthgate.temperatureType")
    public static let sequenceNumberKey = MetadataKey("healthgate.sequenceNumber")
    public static let glucoseTypeKey = MetadataKey("healthgate.glucoseType")
    public static let sampleLocationKey = MetadataKey("healthgate.sampleLocation")
    public static let basalMetabolismKey = MetadataKey("healthgate.basalMetabolismKilojoules")
    public static let musclePercentageKey = MetadataKey("healthgate.musclePercentage")
    public static let muscleMassKey = MetadataKey("healthgate.muscleMassKilograms")
    public static let softLeanMassKey = MetadataKey("healthgate.softLeanMassKilograms")
    public static let bodyWaterMassKey = MetadataKey("healthgate.bodyWaterMassKilograms")
    public static let impedanceKey = MetadataKey("healthgate.impedanceOhms")

    let ids: SampleIDGenerator

    public init(ids: SampleIDGenerator) {
        self.ids = ids
    }

    // MARK: Measurements

    /// bodyMass, bodyMassIndex (sent, or computed from the profile's height) and height.
    public func records(_ m: WeightMeasurement, _ context: Context) throws(SampleError) -> [HealthRecord] {
        guard let weight = m.weight else { return [] }
        var metadata = base(.weightScale, m.timestamp, context, key: m.timestamp?.rfc3339.map { "weight/\($0)/\(m.userID ?? 255)" })
        if let user = m.userID { metadata[Self.userIndexKey] = .integer(Int64(user)) }
        let time = date(m.timestamp, context)
        let records = [try sample(.bodyMass, weight, .kilogram, time, context, metadata, suffix: "bodyMass")]
        return records + (try bodyMassIndexAndHeight(weight: weight, bmi: m.bmi, height: m.height, time, context, metadata))
    }

    /// bodyFatPercentage, leanBodyMass (the fat free mass), bodyMass and height when sent, and
    /// bodyMassIndex from the weight and the height the record carries, else the profile's
    /// height. The other fields go into every sample's metadata. Give it complete records only
    /// (``BodyCompositionReassembler``).
    public func records(_ m: BodyCompositionMeasurement, _ context: Context) throws(SampleError) -> [HealthRecord] {
        var metadata = base(
            .bodyComposition, m.timestamp, context, key: m.timestamp?.rfc3339.map { "bodyComposition/\($0)/\(m.userID ?? 255)" })
        if let user = m.userID { metadata[Self.userIndexKey] = .integer(Int64(user)) }
        if let basal = m.basalMetabolism { metadata[Self.basalMetabolismKey] = .integer(Int64(basal)) }
        if let muscle = m.musclePercentage { metadata[Self.musclePercentageKey] = .double(muscle) }
        if let muscle = m.muscleMass { metadata[Self.muscleMassKey] = .double(muscle) }
        if let lean = m.softLeanMass { metadata[Self.softLeanMassKey] = .double(lean) }
        if let water = m.bodyWaterMass { metadata[Self.bodyWaterMassKey] = .double(water) }
        if let impedance = m.impedance { metadata[Self.impedanceKey] = .double(impedance) }
        let time = date(m.timestamp, context)
        var records: [HealthRecord] = []
        if let fat = m.bodyFatPercentage {
            records.append(try sample(.bodyFatPercentage, fat, .percent, time, context, metadata, suffix: "bodyFatPercentage"))
        }
        if let lean = m.fatFreeMass {
            records.append(try sample(.leanBodyMass, lean, .kilogram, time, context, metadata, suffix: "leanBodyMass"))
        }
        if let weight = m.weight {
            records.append(try sample(.bodyMass, weight, .kilogram, time, context, metadata, suffix: "bodyMass"))
        }
        return records + (try bodyMassIndexAndHeight(weight: m.weight, bmi: nil, height: m.height, time, context, metadata))
    }

    /// bodyMassIndex, as sent (`bmi`) or else computed from `weight` and the sent `height`, else
    /// the profile's height (marked ``bmiComputedKey``); none without a weight and a positive
    /// height. Then height, when sent.
    private func bodyMassIndexAndHeight(
        weight: Double?, bmi: Double?, height sent: Double?, _ time: Date, _ context: Context, _ metadata: Metadata
    ) throws(SampleError) -> [HealthRecord] {
        var records: [HealthRecord] = []
        if let bmi {
            records.append(try sample(.bodyMassIndex, bmi, .count, time, context, metadata, suffix: "bodyMassIndex"))
        } else if let weight, let height = sent ?? context.profileHeight, height > 0 {
            var computed = metadata
            if sent == nil { computed[Self.bmiComputedKey] = .bool(true) }
            records.append(try sample(
                .bodyMassIndex, weight / (height * height), .count, time, context, computed, suffix: "bodyMassIndex"))
        }
        if let sent {
            records.append(try sample(.height, sent, .meter, time, context, metadata, suffix: "height"))
        }
        return records
    }

    /// A bloodPressure correlation (systolic and diastolic in mmHg) and heartRate from
    /// the pulse; nothing when either pressure is a special value.
    public func records(_ m: BloodPressureMeasurement, _ context: Context) throws(SampleError) -> [HealthRecord] {
        var metadata = base(.bloodPressure, m.timestamp, context, key: m.timestamp?.rfc3339.map { "bloodPressure/\($0)/\(m.userID ?? 255)" })
        if let user = m.userID { metadata[Self.userIndexKey] = .integer(Int64(user)) }
        if let status = m.measurementStatus { metadata[Self.measurementStatusKey] = .integer(Int64(status)) }
        let time = date(m.timestamp, context)
        var records: [HealthRecord] = []
        if let systolic = m.millimetersOfMercury(m.systolic), let diastolic = m.millimetersOfMercury(m.diastolic) {
            var memberMetadata = Metadata()
            memberMetadata[Self.deviceTimestampKey] = metadata[Self.deviceTimestampKey]
            var correlationMetadata = metadata
            if let mean = m.millimetersOfMercury(m.meanArterialPressure) {
                correlationMetadata[Self.meanArterialPressureKey] = .double(mean)
            }
            let members = (
                try QuantitySample(
                    id: id(for: correlationMetadata, member: "bloodPressureSystolic"), type: .bloodPressureSystolic, quantity: Quantity(systolic, .millimeterOfMercury), start: time, end: time,
                    device: context.device, metadata: memberMetadata),
                try QuantitySample(
                    id: id(for: correlationMetadata, member: "bloodPressureDiastolic"), type: .bloodPressureDiastolic, quantity: Quantity(diastolic, .millimeterOfMercury), start: time, end: time,
                    device: context.device, metadata: memberMetadata))
            records.append(.correlation(try .bloodPressure(
                id: id(for: correlationMetadata), systolic: members.0, diastolic: members.1, device: context.device,
                metadata: correlationMetadata)))
        }
        if let pulse = m.pulseRate?.number {
            records.append(try sample(.heartRate, pulse, .countPerMinute, time, context, metadata, suffix: "heartRate"))
        }
        return records
    }

    /// bodyTemperature in degC, its type as metadata.
    public func records(_ m: TemperatureMeasurement, _ context: Context) throws(SampleError) -> [HealthRecord] {
        guard let celsius = m.celsius else { return [] }
        var metadata = base(.thermometer, m.timestamp, context, key: m.timestamp?.rfc3339.map { "temperature/\($0)" })
        if let type = m.temperatureType { metadata[Self.temperatureTypeKey] = .string(type) }
        return [try sample(.bodyTemperature, celsius, .degreeCelsius, date(m.timestamp, context), context, metadata, suffix: "bodyTemperature")]
    }

    /// oxygenSaturation, heartRate and peripheralPerfusionIndex (the pulse amplitude index).
    public func records(_ m: PLXMeasurement, _ context: Context) throws(SampleError) -> [HealthRecord] {
        let timestamp = m.deviceClockNotSet ? nil : m.timestamp
        let metadata = base(.pulseOximeter, timestamp, context, key: timestamp?.rfc3339.map { "pulseOximetry/\($0)" })
        let time = date(timestamp, context)
        var records: [HealthRecord] = []
        if let spo2 = m.oxygenSaturation.number {
            records.append(try sample(.oxygenSaturation, spo2, .percent, time, context, metadata, suffix: "oxygenSaturation"))
        }
        if let pulse = m.pulseRate.number {
            records.append(try sample(.heartRate, pulse, .countPerMinute, time, context, metadata, suffix: "heartRate"))
        }
        if let index = m.pulseAmplitudeIndex?.number {
            records.append(try sample(
                .peripheralPerfusionIndex, index, .percent, time, context, metadata, suffix: "peripheralPerfusionIndex"))
        }
        return records
    }

    /// bloodGlucose: mg/dL from kg/L, HealthKit's molar unit from mol/L; keyed by sequence number.
    /// A Glucose Measurement Context with the same sequence number adds its metadata; one of
    /// another record is ignored.
    public func records(
        _ m: GlucoseMeasurement, _ context: Context, measurementContext: GlucoseMeasurementContext? = nil
    ) throws(SampleError) -> [HealthRecord] {
        guard let value = m.concentration?.number, let milligrams = m.milligramsPerDeciliter else { return [] }
        var metadata = base(.glucoseMeter, m.timestamp, context, key: "bloodGlucose/\(m.sequenceNumber)")
        if let measurementContext, measurementContext.sequenceNumber == m.sequenceNumber {
            for (key, entry) in measurementContext.metadata { metadata[key] = entry }
        }
        metadata[Self.sequenceNumberKey] = .integer(Int64(m.sequenceNumber))
        if let type = m.type { metadata[Self.glucoseTypeKey] = .string(type) }
        if let location = m.sampleLocation { metadata[Self.sampleLocationKey] = .string(location) }
        // The digits the meter sent, without the scaling's binary noise (120 mg/dL, not 119.99999999999999).
        let quantity = m.unit == .molePerLiter
            ? Quantity((value * 1000).withoutConversionNoise, .millimolePerLiterOfGlucose)
            : Quantity(milligrams, .milligramPerDeciliter)
        let time = date(m.timestamp, context)
        return [.quantity(try QuantitySample(
            id: id(for: metadata), type: .bloodGlucose, quantity: quantity, start: time, end: time, device: context.device,
            metadata: metadata))]
    }

    // MARK: Pieces

    /// The record's time: the device time stamp corrected by the clock offset, else reception.
    func date(_ timestamp: DeviceTimestamp?, _ context: Context) -> Date {
        guard let timestamp, timestamp.isComplete, let offset = context.offset(for: timestamp) else { return context.receivedAt }
        return Date(timeIntervalSince1970: timestamp.wallClockSeconds + offset)
    }

    /// The device's specialization (the profile that read it), the device time stamp and clock
    /// offset as metadata, and the sync identifier from `key`.
    func base(
        _ specialization: MDCDeviceSpecialization, _ timestamp: DeviceTimestamp?, _ context: Context, key: String?
    ) -> Metadata {
        var metadata = Metadata()
        metadata[.mdcDeviceSpecializations] = .string(specialization.listed)
        if let text = timestamp?.rfc3339 {
            metadata[Self.deviceTimestampKey] = .string(text)
            if let timestamp, let offset = context.offset(for: timestamp) {
                metadata[Self.clockOffsetKey] = .double(offset)
                if timestamp.isComplete, context.datesFromDeviceClock { metadata[.deviceClock] = .bool(true) }
            }
        }
        if let key, let identity = context.device.localIdentifier {
            metadata.syncIdentifier = "\(identity)/\(key)"
            metadata.syncVersion = 1
        }
        return metadata
    }

    /// The uuid of a record: derived from its sync identifier and version when it has one
    /// (``HealthModel/SampleID/init(syncIdentifier:version:)``), so the same record downloaded again
    /// gets the same uuid and a repository that deduplicates by uuid keeps it once; else a new
    /// one. A correlation's `member` gets its own, derived from the correlation's.
    func id(for metadata: Metadata, member: String? = nil) -> SampleID {
        guard let sync = metadata.syncIdentifier else { return ids.next() }
        return SampleID(syncIdentifier: member.map { "\(sync)/\($0)" } ?? sync, version: metadata.syncVersion ?? 1)
    }

    /// One quantity sample; a sync identifier of the reading gets the sample's type appended, so
    /// each sample of one reading has its own.
    func sample(
        _ type: QuantityType, _ value: Double, _ unit: HealthUnit, _ time: Date, _ context: Context, _ metadata: Metadata,
        suffix: String
    ) throws(SampleError) -> HealthRecord {
        var metadata = metadata
        if let sync = metadata.syncIdentifier, !sync.hasSuffix("/\(suffix)") { metadata.syncIdentifier = "\(sync)/\(suffix)" }
        return .quantity(try QuantitySample(
            id: id(for: metadata), type: type, quantity: Quantity(value, unit), start: time, end: time, device: context.device,
            metadata: metadata))
    }
}

public import GATTDecoding

/// One PLX Spot-check Measurement (0x2A5E) indication or PLX Continuous Measurement (0x2A5F)
/// notification from a pulse oximeter, decoded.
///
/// Layouts from the Pulse Oximeter Service v1.0 and the GATT Specification Supplement.
/// Spot-check: flags (bit 0 time stamp, bit 1 measurement status, bit 2 device and sensor status,
/// bit 3 pulse amplitude index, bit 4 device clock not set), SpO2 and pulse rate (SFLOATs), a
/// Date Time, the measurement status (uint16), the device and sensor status (uint24) and the
/// pulse amplitude index (SFLOAT, %). Continuous: flags (bit 0 SpO2PR-Fast, bit 1 SpO2PR-Slow,
/// bit 2 measurement status, bit 3 device and sensor status, bit 4 pulse amplitude index), the
/// normal SpO2 and pulse rate, the fast and slow pairs, then the same status fields and index.
public struct PLXMeasurement: Hashable, Sendable {
    public var flags: UInt8
    /// SpO2 in percent.
    public var oxygenSaturation: MedicalFloat
    /// Beats per minute.
    public var pulseRate: MedicalFloat
    /// Continuous only: the fast and slow averages, when sent.
    public var fast: (oxygenSaturation: MedicalFloat, pulseRate: MedicalFloat)? { fastPair.map { ($0[0], $0[1]) } }
    public var slow: (oxygenSaturation: MedicalFloat, pulseRate: MedicalFloat)? { slowPair.map { ($0[0], $0[1]) } }
    var fastPair: [MedicalFloat]?
    var slowPair: [MedicalFloat]?
    /// Spot-check only.
    public var timestamp: DeviceTimestamp?
    public var measurementStatus: UInt16?
    public var deviceAndSensorStatus: UInt32?
    /// The pulse amplitude index (the perfusion index), in percent.
    public var pulseAmplitudeIndex: MedicalFloat?
    /// Spot-check flag bit 4: the device's clock is not set, so its time stamp is not a time.
    public var deviceClockNotSet: Bool

    init(
        flags: UInt8, oxygenSaturation: MedicalFloat, pulseRate: MedicalFloat, fastPair: [MedicalFloat]?,
        slowPair: [MedicalFloat]?, timestamp: DeviceTimestamp?, measurementStatus: UInt16?,
        deviceAndSensorStatus: UInt32?, pulseAmplitudeIndex: MedicalFloat?, deviceClockNotSet: Bool
    ) {
        self.flags = flags
        self.oxygenSaturation = oxygenSaturation
        self.pulseRate = pulseRate
        self.fastPair = fastPair
        self.slowPair = slowPair
        self.timestamp = timestamp
        self.measurementStatus = measurementStatus
        self.deviceAndSensorStatus = deviceAndSensorStatus
        self.pulseAmplitudeIndex = pulseAmplitudeIndex
        self.deviceClockNotSet = deviceClockNotSet
    }

    /// oxygenSaturation (%), pulseRate (count/min), pulseAmplitudeIndex (%), measurementStatus,
    /// deviceAndSensorStatus, timestamp (null when absent or the device clock is not set).
    public var report: MeasurementReport {
        MeasurementReport([
            "oxygenSaturation": .number(oxygenSaturation.number), "pulseRate": .number(pulseRate.number),
            "pulseAmplitudeIndex": .number(pulseAmplitudeIndex?.number),
            "measurementStatus": .integer(measurementStatus.map(Int.init)),
            "deviceAndSensorStatus": .integer(deviceAndSensorStatus.map(Int.init)),
            "timestamp": .string(deviceClockNotSet ? nil : timestamp?.rfc3339),
        ])
    }
}

/// Decodes PLX Spot-check and Continuous Measurement payloads. Pure.
public enum PLXMeasurementDecoder {
    /// Decodes one PLX Spot-check Measurement; bytes after the announced fields are ignored.
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decodeSpotCheck(_ payload: [UInt8]) throws(HealthDecodingError) -> PLXMeasurement {
        var reader = HealthPayloadReader(payload, .plxSpotCheckMeasurement)
        let flags = try reader.uint8("flags")
        let spo2 = try reader.sfloat("oxygenSaturation")
        let pulse = try reader.sfloat("pulseRate")
        let timestamp = flags & 0x01 != 0 ? try reader.timestamp("timestamp") : nil
        let status = flags & 0x02 != 0 ? try reader.uint16("measurementStatus") : nil
        let device = flags & 0x04 != 0 ? try reader.unsigned(3, "deviceAndSensorStatus") : nil
        let index = flags & 0x08 != 0 ? try reader.sfloat("pulseAmplitudeIndex") : nil
        return PLXMeasurement(
            flags: flags, oxygenSaturation: spo2, pulseRate: pulse, fastPair: nil, slowPair: nil, timestamp: timestamp,
            measurementStatus: status, deviceAndSensorStatus: device, pulseAmplitudeIndex: index,
            deviceClockNotSet: flags & 0x10 != 0)
    }

    /// Decodes one PLX Continuous Measurement; bytes after the announced fields are ignored.
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decodeContinuous(_ payload: [UInt8]) throws(HealthDecodingError) -> PLXMeasurement {
        var reader = HealthPayloadReader(payload, .plxContinuousMeasurement)
        let flags = try reader.uint8("flags")
        let spo2 = try reader.sfloat("oxygenSaturation")
        let pulse = try reader.sfloat("pulseRate")
        let fast = flags & 0x01 != 0 ? [try reader.sfloat("oxygenSaturationFast"), try reader.sfloat("pulseRateFast")] : nil
        let slow = flags & 0x02 != 0 ? [try reader.sfloat("oxygenSaturationSlow"), try reader.sfloat("pulseRateSlow")] : nil
        let status = flags & 0x04 != 0 ? try reader.uint16("measurementStatus") : nil
        let device = flags & 0x08 != 0 ? try reader.unsigned(3, "deviceAndSensorStatus") : nil
        let index = flags & 0x10 != 0 ? try reader.sfloat("pulseAmplitudeIndex") : nil
        return PLXMeasurement(
            flags: flags, oxygenSaturation: spo2, pulseRate: pulse, fastPair: fast, slowPair: slow, timestamp: nil,
            measurementStatus: status, deviceAndSensorStatus: device, pulseAmplitudeIndex: index,
            deviceClockNotSet: false)
    }
}

public import GATTDecoding

/// The Sensor Status Annunciation of a CGM Measurement or of CGM Status (CGMS 1.0.1 §3.1.1.6):
/// three octets, each present or absent, sent in the order Status, Cal/Temp, Warning.
public struct CGMSensorStatus: Hashable, Sendable {
    /// The Status octet: session stopped, battery low, wrong sensor type, malfunction, device
    /// specific alert, general device fault.
    public var status: UInt8?
    /// The Cal/Temp octet: time synchronisation required, calibration not allowed, recommended,
    /// required, sensor temperature too high, too low.
    public var calibrationTemperature: UInt8?
    /// The Warning octet: below the patient low level, above the patient high level, below hypo,
    /// above hyper, rate of decrease exceeded, rate of increase exceeded, below and above what the
    /// device can process.
    public var warning: UInt8?

    public init(status: UInt8? = nil, calibrationTemperature: UInt8? = nil, warning: UInt8? = nil) {
        self.status = status
        self.calibrationTemperature = calibrationTemperature
        self.warning = warning
    }

    /// The names of the bits of each octet, bit 0 first.
    static let statusNames = [
        "sessionStopped", "deviceBatteryLow", "sensorTypeIncorrect", "sensorMalfunction", "deviceSpecificAlert",
        "generalDeviceFault",
    ]
    static let calibrationTemperatureNames = [
        "timeSynchronizationRequired", "calibrationNotAllowed", "calibrationRecommended", "calibrationRequired",
        "sensorTemperatureTooHigh", "sensorTemperatureTooLow",
    ]
    static let warningNames = [
        "resultBelowPatientLowLevel", "resultAbovePatientHighLevel", "resultBelowHypoLevel", "resultAboveHyperLevel",
        "rateOfDecreaseExceeded", "rateOfIncreaseExceeded", "resultBelowDeviceRange", "resultAboveDeviceRange",
    ]

    /// Every annunciation that is set, by name, in the order Status, Cal/Temp, Warning; reserved
    /// bits are left out.
    public var annunciations: [String] {
        func names(_ octet: UInt8?, _ names: [String]) -> [String] {
            guard let octet else { return [] }
            return names.indices.filter { octet & (1 << $0) != 0 }.map { names[$0] }
        }
        return names(status, Self.statusNames) + names(calibrationTemperature, Self.calibrationTemperatureNames)
            + names(warning, Self.warningNames)
    }

    /// The three octets as one number, Status in the low octet (as CGM Status sends them); an
    /// absent octet counts as 0. Nil when all three are absent.
    public var value: Int? {
        guard status != nil || calibrationTemperature != nil || warning != nil else { return nil }
        return Int(UInt32(status ?? 0) | UInt32(calibrationTemperature ?? 0) << 8 | UInt32(warning ?? 0) << 16)
    }

    /// Whether the sensor says its session is stopped.
    public var sessionStopped: Bool { (status ?? 0) & 0x01 != 0 }
}

/// One record of a CGM Measurement (0x2AA7, CGMS 1.0.1 §3.1): a notification carries one or
/// more, each starting with its own size.
public struct CGMMeasurementRecord: Hashable, Sendable {
    /// The glucose concentration (mg/dL, SFLOAT); a special value is kept as what it is.
    public var glucoseConcentration: MedicalFloat
    /// Minutes since the session started.
    public var timeOffsetMinutes: Int
    /// The sensor status annunciation; every octet nil when the flags announce none.
    public var sensorStatus: CGMSensorStatus
    /// The trend (mg/dL/min, SFLOAT), nil when absent.
    public var trend: MedicalFloat?
    /// The quality (%, SFLOAT), nil when absent.
    public var quality: MedicalFloat?
    /// The record's E2E-CRC.
    public var e2e: E2EVerdict
    /// The record's own octets, for a log line about it.
    public var bytes: [UInt8]

    public init(
        glucoseConcentration: MedicalFloat, timeOffsetMinutes: Int, sensorStatus: CGMSensorStatus = CGMSensorStatus(),
        trend: MedicalFloat? = nil, quality: MedicalFloat? = nil, e2e: E2EVerdict = .absent, bytes: [UInt8] = []
    ) {
        self.glucoseConcentration = glucoseConcentration
        self.timeOffsetMinutes = timeOffsetMinutes
        self.sensorStatus = sensorStatus
        self.trend = trend
        self.quality = quality
        self.e2e = e2e
        self.bytes = bytes
    }
}

/// Decodes CGM Measurement notifications.
///
/// Each record: Size (uint8, the record's octets, Size included), Flags (bit 0 trend, bit 1
/// quality, bit 5 Warning octet, bit 6 Cal/Temp octet, bit 7 Status octet; bits 2 to 4
/// reserved), Glucose Concentration (SFLOAT, mg/dL), Time Offset (uint16, minutes), the status
/// octets the flags announce (Status, Cal/Temp, Warning, in that order), Trend (SFLOAT,
/// mg/dL/min), Quality (SFLOAT, %), and an E2E-CRC when Size is the fields' length plus two.
public enum CGMMeasurementDecoder {
    /// The smallest record: Size, Flags, concentration and time offset.
    public static let minimumRecordSize = 6

    /// Every record of one notification, in order.
    /// - Throws: ``CGMDecodingError`` for an empty value, a Size below 6, a record the value
    ///   cuts short, a field the flags announce that Size leaves no room for, or a Size that is
    ///   neither the fields' length nor that plus the CRC's two octets. Offsets are from the
    ///   start of the notification.
    public static func decode(_ bytes: [UInt8]) throws(CGMDecodingError) -> [CGMMeasurementRecord] {
        guard !bytes.isEmpty else {
            throw CGMDecodingError(.truncated, characteristic: .measurement, field: "size", offset: 0, needed: 1, available: 0)
        }
        var records: [CGMMeasurementRecord] = []
        var start = 0
        while start < bytes.count {
            let size = Int(bytes[start])
            guard size >= minimumRecordSize else {
                throw CGMDecodingError(
                    .valueOutOfRange, characteristic: .measurement, field: "size", offset: start, needed: minimumRecordSize,
                    available: bytes.count - start, value: size)
            }
            guard start + size <= bytes.count else {
                throw CGMDecodingError(
                    .truncated, characteristic: .measurement, field: "record", offset: start, needed: size,
                    available: bytes.count - start)
            }
            do {
                records.append(try record(Array(bytes[start..<start + size])))
            } catch {
                // Offsets from the notification's start; an unexpected length's two as well.
                var error = error
                error.offset += start
                if error.code == .unexpectedLength { error.needed += start }
                throw error
            }
            start += size
        }
        return records
    }

    /// One record, `bytes` exactly its Size octets.
    static func record(_ bytes: [UInt8]) throws(CGMDecodingError) -> CGMMeasurementRecord {
        var reader = GATTPayloadReader(bytes, CGMCharacteristic.measurement)
        _ = try reader.uint8("size")
        let flags = try reader.uint8("flags")
        let concentration = try reader.sfloat("glucoseConcentration")
        let offset = Int(try reader.uint16("timeOffsetMinutes"))
        var status = CGMSensorStatus()
        if flags & 0x80 != 0 { status.status = try reader.uint8("statusOctet") }
        if flags & 0x40 != 0 { status.calibrationTemperature = try reader.uint8("calibrationTemperatureOctet") }
        if flags & 0x20 != 0 { status.warning = try reader.uint8("warningOctet") }
        let trend = flags & 0x01 != 0 ? try reader.sfloat("trend") : nil
        let quality = flags & 0x02 != 0 ? try reader.sfloat("quality") : nil
        let e2e = try E2ECRC.verdict(&reader, characteristic: .measurement, sizeField: "size")
        return CGMMeasurementRecord(
            glucoseConcentration: concentration, timeOffsetMinutes: offset, sensorStatus: status, trend: trend, quality: quality,
            e2e: e2e, bytes: bytes)
    }
}

extension E2ECRC {
    /// Reads the optional E2E-CRC that ends a value: none when the fields fill it, the CRC over
    /// every octet before it when exactly two octets remain.
    /// - Throws: `.unexpectedLength` naming `sizeField` when one or more than two octets remain.
    static func verdict(
        _ reader: inout GATTPayloadReader<CGMCharacteristic>, characteristic: CGMCharacteristic, sizeField: String
    ) throws(CGMDecodingError) -> E2EVerdict {
        switch reader.remaining {
        case 0:
            return .absent
        case 2:
            let fields = reader.offset
            let sent = try reader.uint16("e2eCrc")
            return E2EVerdict(sent: sent, over: reader.bytes[0..<fields])
        default:
            throw CGMDecodingError(
                .unexpectedLength, characteristic: characteristic, field: sizeField, offset: reader.offset,
                needed: reader.offset, available: reader.remaining)
        }
    }
}

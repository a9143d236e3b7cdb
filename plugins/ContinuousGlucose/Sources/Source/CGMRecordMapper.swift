public import FoundationEssentials
public import HealthModel
import GATTDecoding

/// Metadata keys the CGM source writes.
extension MetadataKey {
    /// Minutes from the session's start to the record (the sensor's own clock).
    public static let cgmTimeOffsetMinutes: MetadataKey = "healthgate.cgmTimeOffsetMinutes"
    /// When the session started (RFC 3339, UTC), from which the record's time is counted.
    public static let cgmSessionStart: MetadataKey = "healthgate.cgmSessionStart"
    /// The trend the sensor sent (mg/dL/min).
    public static let cgmTrend: MetadataKey = "healthgate.cgmTrendMilligramsPerDeciliterPerMinute"
    /// The quality the sensor sent (%).
    public static let cgmQuality: MetadataKey = "healthgate.cgmQualityPercent"
    /// The sensor status annunciation, Status in the low octet, then Cal/Temp, then Warning.
    public static let cgmSensorStatus: MetadataKey = "healthgate.cgmSensorStatus"
}

/// Turns a CGM record into a `bloodGlucose` sample. Pure: no clock, no I/O.
///
/// The sample's time is the session's start plus the record's time offset. A sensor keeps its
/// records and sends them again when asked, so each gets the sync identifier
/// `sensor/cgm/<session start, Unix seconds>/<time offset>` and a uuid derived from it: the store
/// and every repository keep it once however often it is downloaded.
public enum CGMRecordMapper {
    /// The sample of `record`; nil when its concentration is a special value (NaN, NRes,
    /// ±INFINITY, reserved), which is never stored.
    /// - Parameters:
    ///   - sessionStart: when the sensor's session started (UTC).
    ///   - sensor: the sensor's identity in sync identifiers (its local identifier).
    public static func sample(
        _ record: CGMMeasurementRecord, sessionStart: Date, device: Device, sensor: String
    ) throws(SampleError) -> QuantitySample? {
        guard let concentration = record.glucoseConcentration.number else { return nil }
        let time = sessionStart.addingTimeInterval(Double(record.timeOffsetMinutes) * 60)
        var metadata = Metadata()
        metadata.syncIdentifier = "\(sensor)/cgm/\(Int64(sessionStart.timeIntervalSince1970.rounded()))/\(record.timeOffsetMinutes)"
        metadata.syncVersion = 1
        metadata[.mdcDeviceSpecializations] = .string(MDCDeviceSpecialization.continuousGlucose.listed)
        metadata[.cgmTimeOffsetMinutes] = .integer(Int64(record.timeOffsetMinutes))
        metadata[.cgmSessionStart] = .string(sessionStart.formatted(.iso8601))
        if let trend = record.trend?.number { metadata[.cgmTrend] = .double(trend) }
        if let quality = record.quality?.number { metadata[.cgmQuality] = .double(quality) }
        if let status = record.sensorStatus.value { metadata[.cgmSensorStatus] = .integer(Int64(status)) }
        return try QuantitySample(
            id: SampleID(syncIdentifier: metadata.syncIdentifier ?? "", version: 1), type: .bloodGlucose,
            quantity: Quantity(concentration, .milligramPerDeciliter), start: time, end: time, device: device, metadata: metadata)
    }
}

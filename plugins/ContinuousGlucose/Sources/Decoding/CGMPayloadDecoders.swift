import BLEProfileKit
public import SampleBus
import FoundationEssentials
import GATTDecoding
import GatewayRuntime

/// What `healthgate decode cgm-measurement` prints: `{"records": [...]}`, one object per record of
/// the notification.
struct CGMMeasurementReport: Encodable, Sendable {
    let records: [CGMMeasurementRecord]

    enum Keys: String, CodingKey {
        case records, glucoseConcentration, timeOffsetMinutes, trend, quality, sensorStatus, e2eCrc
        case status, calibrationTemperature, warning, annunciations
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var list = container.nestedUnkeyedContainer(forKey: .records)
        for record in records {
            var object = list.nestedContainer(keyedBy: Keys.self)
            try object.encode(record.glucoseConcentration.number, forKey: .glucoseConcentration)
            try object.encode(record.timeOffsetMinutes, forKey: .timeOffsetMinutes)
            try object.encode(record.trend?.number, forKey: .trend)
            try object.encode(record.quality?.number, forKey: .quality)
            try Self.encode(record.sensorStatus, into: &object)
            try object.encode(record.e2e.name, forKey: .e2eCrc)
        }
    }

    /// `sensorStatus`: each octet as a number, null when absent, and the annunciations by name.
    static func encode(_ status: CGMSensorStatus, into object: inout KeyedEncodingContainer<Keys>) throws {
        var nested = object.nestedContainer(keyedBy: Keys.self, forKey: .sensorStatus)
        try nested.encode(status.status, forKey: .status)
        try nested.encode(status.calibrationTemperature, forKey: .calibrationTemperature)
        try nested.encode(status.warning, forKey: .warning)
        try nested.encode(status.annunciations, forKey: .annunciations)
    }
}

/// What `healthgate decode cgm-status` prints.
struct CGMStatusReport: Encodable, Sendable {
    let status: CGMStatus

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CGMMeasurementReport.Keys.self)
        try container.encode(status.timeOffsetMinutes, forKey: .timeOffsetMinutes)
        try CGMMeasurementReport.encode(status.sensorStatus, into: &container)
        try container.encode(status.e2e.name, forKey: .e2eCrc)
    }
}

extension KeyedEncodingContainer {
    /// Encodes nil as null rather than leaving the key out.
    mutating func encode<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}

extension CGMProfile {
    /// `healthgate decode` for the CGM service's characteristics.
    public static var payloadDecoders: [PayloadDecoder] {
        [
            PayloadDecoder(
                "cgm-measurement", "CGM Measurement (0x2AA7) from a continuous glucose monitor: one or more records.",
                example: "healthgate decode cgm-measurement 0FE3D2E405000214FF02F0E5F38E3F",
                keys: """
                    records: one object per record, in order: glucoseConcentration (mg/dL, or null for NaN, NRes, \
                    ±INFINITY or reserved), timeOffsetMinutes (since the session started), trend (mg/dL/min) and \
                    quality (%), each null when absent or a special value; sensorStatus (status, \
                    calibrationTemperature and warning: each octet as a number, or null when absent; \
                    annunciations: the bits set, by name); e2eCrc ("absent", "valid" or "mismatch": the gateway \
                    stores no record whose CRC does not match)
                    """
            ) { bytes throws(CGMDecodingError) in CGMMeasurementReport(records: try CGMMeasurementDecoder.decode(bytes)) },
            PayloadDecoder(
                "cgm-feature", "CGM Feature (0x2AA8): what the sensor supports, its sample type and location.",
                example: "healthgate decode cgm-feature 6E9E01168AC1",
                keys: """
                    features (the supported features by name), type and sampleLocation (or null when reserved), \
                    e2eCrc ("absent" when the sensor does not support E2E-CRC, else "valid" or "mismatch")
                    """
            ) { bytes throws(CGMDecodingError) in
                let feature = try CGMSensorDecoder.feature(bytes)
                return FeatureReport(
                    features: feature.featureNames, type: feature.type, sampleLocation: feature.sampleLocation,
                    e2eCrc: feature.e2e.name)
            },
            PayloadDecoder(
                "cgm-status", "CGM Status (0x2AA9): the sensor's time offset now and its status.",
                example: "healthgate decode cgm-status 05003F3FFFA7E0",
                keys: """
                    timeOffsetMinutes, sensorStatus (status, calibrationTemperature, warning, annunciations, as in \
                    cgm-measurement), e2eCrc
                    """
            ) { bytes throws(CGMDecodingError) in CGMStatusReport(status: try CGMSensorDecoder.status(bytes)) },
            PayloadDecoder(
                "cgm-session-start-time", "CGM Session Start Time (0x2AAA): when the session started.",
                example: "healthgate decode cgm-session-start-time E20704180D08180804E0C2",
                keys: """
                    localTime (the date and time as sent, ISO 8601 without a zone, or null when not set), \
                    timeZoneMinutes and dstOffsetMinutes (or null when unknown), start (UTC, RFC 3339, or null \
                    when not set or its zone is unknown), e2eCrc
                    """
            ) { bytes throws(CGMDecodingError) in
                let start = try CGMSensorDecoder.sessionStartTime(bytes)
                let local =
                    start.year == 0
                    ? nil
                    : String(
                        cFormat: "%04ld-%02ld-%02ldT%02ld:%02ld:%02ld", start.year, start.month, start.day, start.hour,
                        start.minute, start.second)
                return NullableJSON([
                    ("localTime", .string(local)), ("timeZoneMinutes", .integer(start.timeZoneQuarterHours.map { $0 * 15 })),
                    ("dstOffsetMinutes", .integer(start.dstQuarterHours.map { $0 * 15 })),
                    ("start", .string(start.date.map { $0.formatted(.iso8601) })), ("e2eCrc", .string(start.e2e.name)),
                ])
            },
            PayloadDecoder(
                "cgm-session-run-time", "CGM Session Run Time (0x2AAB): how long the session is expected to run.",
                example: "healthgate decode cgm-session-run-time 5000",
                keys: "hours, e2eCrc"
            ) { bytes throws(CGMDecodingError) in
                let runTime = try CGMSensorDecoder.sessionRunTime(bytes)
                return NullableJSON([("hours", .integer(runTime.hours)), ("e2eCrc", .string(runTime.e2e.name))])
            },
        ]
    }
}

/// What `healthgate decode cgm-feature` prints.
struct FeatureReport: Encodable, Sendable {
    let features: [String]
    let type: String?
    let sampleLocation: String?
    let e2eCrc: String

    enum CodingKeys: CodingKey { case features, type, sampleLocation, e2eCrc }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(features, forKey: .features)
        try container.encode(type, forKey: .type)
        try container.encode(sampleLocation, forKey: .sampleLocation)
        try container.encode(e2eCrc, forKey: .e2eCrc)
    }
}

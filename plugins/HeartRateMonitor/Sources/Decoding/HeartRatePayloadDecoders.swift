import BLEProfileKit
public import SampleBus
import FoundationEssentials
import GATTDecoding
import HealthModel

extension HeartRateProfile {
    /// `healthgate decode` for Heart Rate Measurement, RSC Measurement, Body Sensor Location and
    /// Battery Level.
    public static var payloadDecoders: [PayloadDecoder] {
        [
            PayloadDecoder(
                "heart-rate-measurement", "Heart Rate Measurement (0x2A37).",
                example: "healthgate decode heart-rate-measurement 16485401EC02",
                keys: """
                    heartRate (integer, bpm), sensorContact ("notSupported" | "notDetected" | "detected"), \
                    energyExpended (integer kJ, or null), rrIntervals (integers in 1/1024 s, oldest first), \
                    rrIntervalsSeconds (the same in seconds)
                    """
            ) { bytes throws(GATTDecodingError) in
                let m = try HeartRateMeasurementDecoder.decode(bytes)
                return HeartRateJSON(
                    heartRate: m.heartRate, sensorContact: m.sensorContact.rawValue, energyExpended: m.energyExpended,
                    rrIntervals: m.rrIntervals.map(Int.init), rrIntervalsSeconds: m.rrIntervalsSeconds)
            },
            PayloadDecoder(
                "rsc-measurement", "RSC Measurement (0x2A53) from a running foot pod.",
                example: "healthgate decode rsc-measurement 07341256890704030201",
                keys: """
                    instantaneousSpeed (m/s), instantaneousCadence (steps per minute), strideLength (m, or \
                    null), totalDistance (m, or null), isRunning (boolean)
                    """
            ) { bytes throws(GATTDecodingError) in
                let m = try RSCMeasurementDecoder.decode(bytes)
                return NullableJSON([
                    ("instantaneousSpeed", .number(m.instantaneousSpeed)),
                    ("instantaneousCadence", .integer(m.instantaneousCadence)),
                    ("strideLength", .number(m.strideLength)), ("totalDistance", .number(m.totalDistance)),
                    ("isRunning", .boolean(m.isRunning)),
                ])
            },
            PayloadDecoder(
                "body-sensor-location", "Body Sensor Location (0x2A38).",
                example: "healthgate decode body-sensor-location 01",
                keys: "location (other, chest, wrist, finger, hand, earLobe, foot), value (the code 0-6)"
            ) { bytes throws(GATTDecodingError) in
                let location = try BodySensorLocationDecoder.decode(bytes)
                return NullableJSON([("location", .string(location.name)), ("value", .integer(location.rawValue))])
            },
            PayloadDecoder(
                "battery-level", "Battery Level (0x2A19).", example: "healthgate decode battery-level 57",
                keys: "batteryLevel (integer percent, 0-100)"
            ) { bytes throws(GATTDecodingError) in
                NullableJSON([("batteryLevel", .integer(try BatteryLevelDecoder.decode(bytes)))])
            },
        ]
    }
}

// Optional fields are encoded explicitly so that absent values print as null, not vanish.
private struct HeartRateJSON: Encodable, Sendable {
    var heartRate: Int
    var sensorContact: String
    var energyExpended: Int?
    var rrIntervals: [Int]
    var rrIntervalsSeconds: [Double]

    enum CodingKeys: String, CodingKey { case heartRate, sensorContact, energyExpended, rrIntervals, rrIntervalsSeconds }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(heartRate, forKey: .heartRate)
        try c.encode(sensorContact, forKey: .sensorContact)
        try c.encode(energyExpended, forKey: .energyExpended)
        try c.encode(rrIntervals, forKey: .rrIntervals)
        try c.encode(rrIntervalsSeconds, forKey: .rrIntervalsSeconds)
    }
}



import BLEProfileKit
public import SampleBus
import FoundationEssentials

// `healthgate decode` for the fitness-equipment characteristics: one decoder per characteristic,
// each printing exactly the keys its help lists, in SI units, null when the flags leave a field
// out.
extension FitnessProfile {
    public static var payloadDecoders: [PayloadDecoder] {
        [
            PayloadDecoder(
                "csc-measurement", "CSC Measurement (0x2A5B) from a bike speed and cadence sensor.",
                example: "healthgate decode csc-measurement 0339300000E8035901D007",
                keys: Self.cscKeys
            ) { bytes throws(FitnessDecodingError) in
                let m = try CSCMeasurementDecoder.decode(bytes)
                return NullableJSON(cscFields(wheel: m.wheel, crank: m.crank))
            },
            PayloadDecoder(
                "cycling-power-measurement", "Cycling Power Measurement (0x2A63).",
                example: "healthgate decode cycling-power-measurement 2C0000009F000C00E542",
                keys: """
                    instantaneousPower (W), pedalPowerBalance (%, or null), accumulatedTorque (N·m, or \
                    null), \(Self.cscKeys)
                    """
            ) { bytes throws(FitnessDecodingError) in
                let m = try CyclingPowerMeasurementDecoder.decode(bytes)
                return NullableJSON(
                    [
                        ("instantaneousPower", .integer(m.instantaneousPower)),
                        ("pedalPowerBalance", .number(m.pedalPowerBalance)),
                        ("accumulatedTorque", .number(m.accumulatedTorque)),
                    ] + cscFields(wheel: m.wheel, crank: m.crank))
            },
            PayloadDecoder(
                "treadmill-data", "treadmill's Treadmill Data (0x2ACD).",
                example: "healthgate decode treadmill-data 0C00E20488130032000000",
                keys: "instantaneousSpeed (m/s), totalDistance (m), inclination (%); each null when absent"
            ) { bytes throws(FitnessDecodingError) in
                let m = try TreadmillData.decode(bytes)
                return NullableJSON([
                    ("instantaneousSpeed", .number(m.instantaneousSpeed)),
                    ("totalDistance", .number(m.totalDistance)),
                    ("inclination", .number(m.inclination)),
                ])
            },
            PayloadDecoder(
                "indoor-bike-data", "fitness machine's Indoor Bike Data (0x2AD2).",
                example: "healthgate decode indoor-bike-data 5400C409B400102700C800",
                keys: """
                    instantaneousSpeed (m/s), instantaneousCadence (count/min), instantaneousPower (W), \
                    totalDistance (m); each null when absent
                    """
            ) { bytes throws(FitnessDecodingError) in
                let m = try IndoorBikeData.decode(bytes)
                return NullableJSON([
                    ("instantaneousSpeed", .number(m.instantaneousSpeed)),
                    ("instantaneousCadence", .number(m.instantaneousCadence)),
                    ("instantaneousPower", .number(m.instantaneousPower)),
                    ("totalDistance", .number(m.totalDistance)),
                ])
            },
            PayloadDecoder(
                "rower-data", "rower's Rower Data (0x2AD1).",
                example: "healthgate decode rower-data 24003C9600E80300FA00",
                keys: """
                    strokeRate (count/min), strokeCount (integer), totalDistance (m), instantaneousPower \
                    (W); each null when absent
                    """
            ) { bytes throws(FitnessDecodingError) in
                let m = try RowerData.decode(bytes)
                return NullableJSON([
                    ("strokeRate", .number(m.strokeRate)),
                    ("strokeCount", .integer(m.strokeCount)),
                    ("totalDistance", .number(m.totalDistance)),
                    ("instantaneousPower", .number(m.instantaneousPower)),
                ])
            },
        ]
    }

    private static let cscKeys = """
        cumulativeWheelRevolutions (integer), lastWheelEventTime (s), cumulativeCrankRevolutions \
        (integer), lastCrankEventTime (s); each null when absent
        """

    private static func cscFields(wheel: RevolutionData?, crank: RevolutionData?) -> [(String, NullableJSON.Value)] {
        [
                ("cumulativeWheelRevolutions", .integer(wheel.map { Int($0.cumulativeRevolutions) })),
                ("lastWheelEventTime", .number(wheel?.lastEventTimeSeconds)),
                ("cumulativeCrankRevolutions", .integer(crank.map { Int($0.cumulativeRevolutions) })),
                ("lastCrankEventTime", .number(crank?.lastEventTimeSeconds)),
        ]
    }
}

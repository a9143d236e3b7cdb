import GATTDecoding
import FoundationEssentials
import HealthModel
import HeartRateMonitor

/// `healthgate decode CHARACTERISTIC HEX`: decodes one GATT payload with the gateway's own
/// decoders and prints it as JSON.
enum DecodeCommand {
    static let command = Command(
        name: "decode", summary: "Decode a Bluetooth GATT payload (hex) and print it as JSON.",
        usage: "decode SUBCOMMAND HEX",
        subcommands: [
            heartRateMeasurement, rscMeasurement, bodySensorLocation, batteryLevel,
            cscMeasurement, cyclingPowerMeasurement, treadmillData, indoorBikeData, rowerData,
            weightMeasurement, bodyCompositionMeasurement, bloodPressureMeasurement, temperatureMeasurement, plxSpotCheck, glucoseMeasurement,
        ])

    static let heartRateMeasurement = leaf(
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
    }

    static let rscMeasurement = leaf(
        "rsc-measurement", "RSC Measurement (0x2A53) from a running foot pod.",
        example: "healthgate decode rsc-measurement 07341256890704030201",
        keys: """
            instantaneousSpeed (m/s), instantaneousCadence (steps per minute), strideLength (m, or \
            null), totalDistance (m, or null), isRunning (boolean)
            """
    ) { bytes throws(GATTDecodingError) in
        let m = try RSCMeasurementDecoder.decode(bytes)
        return RSCJSON(
            instantaneousSpeed: m.instantaneousSpeed, instantaneousCadence: m.instantaneousCadence,
            strideLength: m.strideLength, totalDistance: m.totalDistance, isRunning: m.isRunning)
    }

    static let bodySensorLocation = leaf(
        "body-sensor-location", "Body Sensor Location (0x2A38).",
        example: "healthgate decode body-sensor-location 01",
        keys: "location (other, chest, wrist, finger, hand, earLobe, foot), value (the code 0-6)"
    ) { bytes throws(GATTDecodingError) in
        let location = try BodySensorLocationDecoder.decode(bytes)
        return LocationJSON(location: location.name, value: location.rawValue)
    }

    static let batteryLevel = leaf(
        "battery-level", "Battery Level (0x2A19).", example: "healthgate decode battery-level 57",
        keys: "batteryLevel (integer percent, 0-100)"
    ) { bytes throws(GATTDecodingError) in
        BatteryJSON(batteryLevel: try BatteryLevelDecoder.decode(bytes))
    }

    static func leaf<Output: Encodable & Sendable, Failure: Error>(
        _ name: String, _ summary: String, example: String, keys: String,
        _ decode: @escaping @Sendable ([UInt8]) throws(Failure) -> Output
    ) -> Command {
        Command(
            name: name, summary: "Decode a \(summary)", usage: "decode \(name) HEX",
            discussion: """
                HEX is the payload as hex digits; spaces, colons and a 0x prefix are allowed.
                Prints one JSON object with the keys: \(keys).

                Example:
                  \(example)

                Exits 65 with the reason on stderr when the payload is not valid.
                """
        ) { arguments, context in
            guard arguments.positional.count == 1 else {
                throw CommandError(.usage, "expected one HEX argument, got \(arguments.positional.count)")
            }
            let bytes: [UInt8]
            do {
                bytes = try HexPayload.parse(arguments.positional[0])
            } catch let error as HexPayload.ParseError {
                // The argument may be huge (an attacker's 128 KB): quote only its start.
                throw CommandError(
                    .dataError, "\(DecodeCommand.quoted(error.text)) is not a hex payload: \(error.reason)")
            } catch {
                throw CommandError(.dataError, DecodeCommand.abbreviated("\(error)"))
            }
            let output: Output
            do {
                output = try decode(bytes)
            } catch {
                throw CommandError(.dataError, DecodeCommand.abbreviated("\(error)"))
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(output)
            context.print(String(decoding: data, as: UTF8.self))
            return .success
        }
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

private struct RSCJSON: Encodable, Sendable {
    var instantaneousSpeed: Double
    var instantaneousCadence: Int
    var strideLength: Double?
    var totalDistance: Double?
    var isRunning: Bool

    enum CodingKeys: String, CodingKey {
        case instantaneousSpeed, instantaneousCadence, strideLength, totalDistance, isRunning
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(instantaneousSpeed, forKey: .instantaneousSpeed)
        try c.encode(instantaneousCadence, forKey: .instantaneousCadence)
        try c.encode(strideLength, forKey: .strideLength)
        try c.encode(totalDistance, forKey: .totalDistance)
        try c.encode(isRunning, forKey: .isRunning)
    }
}

private struct LocationJSON: Encodable, Sendable {
    var location: String
    var value: Int
}

private struct BatteryJSON: Encodable, Sendable {
    var batteryLevel: Int
}

extension DecodeCommand {
    /// The most characters of an argument an error message repeats.
    static let quoteLimit = 64

    /// `"TEXT"`, or its first ``quoteLimit`` characters and its size when it is longer.
    static func quoted(_ text: String) -> String {
        guard text.count > quoteLimit else { return "\"\(text)\"" }
        return "\"\(text.prefix(quoteLimit))…\" (\(text.utf8.count) bytes)"
    }

    /// `message`, cut to a readable length with the number of bytes left out.
    static func abbreviated(_ message: String, limit: Int = 300) -> String {
        guard message.count > limit else { return message }
        let kept = message.prefix(limit)
        return "\(kept)… (\(message.utf8.count - kept.utf8.count) more bytes)"
    }
}

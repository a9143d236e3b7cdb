public import SampleBus

/// `healthgate decode polar-broadcast` and `healthgate decode mi-scale`: the advertisement
/// decoders as JSON, `null` for an absent field.
public enum BroadcastPayloadDecoders {
    /// The two decoders, Polar's first.
    public static var all: [PayloadDecoder] { [polarBroadcast, miScale] }

    /// Polar's manufacturer data after the company id.
    public static let polarBroadcast = PayloadDecoder(
        "polar-broadcast", "Polar heart-rate broadcast: manufacturer data after the company id 0x006B.",
        example: "healthgate decode polar-broadcast 2B0BB6AC",
        keys: """
            heartRate (integer bpm: the slow average, as Polar's SDK shows it; null when no heart-rate block), \
            fastAverageHeartRate (integer bpm, or null), sensorContact (boolean, or null), batteryOk (boolean: \
            false when the battery needs replacing or recharging; or null), frameCounter (0-7, or null)
            """
    ) { bytes throws(AdvertisementDecodingError) in
        json(try PolarBroadcastDecoder.decode(bytes))
    }

    /// A Xiaomi scale's service data after the UUID.
    public static let miScale = PayloadDecoder(
        "mi-scale", "Xiaomi Mi Scale 2 (0x181D) or Mi Body Composition Scale 2 (0x181B): service data after the UUID.",
        example: "healthgate decode mi-scale 0226B20705040F0201AC018642 --service 181b",
        keys: """
            weight (number, kg whatever the scale shows), unit ("kg" | "lb" | "jin", the scale's own), \
            stabilized (boolean), loadRemoved (boolean), impedance (integer ohms when its flag is set, else null), \
            timestamp (the scale's local time, ISO 8601 without a zone; null while its clock is unset)
            """,
        options: [
            PayloadDecoder.Option(
                "service", choices: MiScaleService.allCases.map(\.hexName), required: true,
                help: "The service-data UUID: 181d (Mi Scale 2) or 181b (Mi Body Composition Scale 2).")
        ]
    ) { bytes, options throws(AdvertisementDecodingError) in
        let service = MiScaleService.allCases.first { $0.hexName == options["service"] } ?? .weightScale
        return json(try MiScaleDecoder.decode(bytes, service: service))
    }

    /// The JSON object `decode polar-broadcast` prints.
    public static func json(_ broadcast: PolarBroadcast) -> NullableJSON {
        let block = broadcast.heartRate
        return NullableJSON([
            ("heartRate", .integer(block?.slowAverageHeartRate)),
            ("fastAverageHeartRate", .integer(block?.fastAverageHeartRate)),
            ("sensorContact", .boolean(block?.sensorContact)), ("batteryOk", .boolean(block?.batteryOk)),
            ("frameCounter", .integer(block.map { Int($0.frameCounter) })),
        ])
    }

    /// The JSON object `decode mi-scale` prints.
    public static func json(_ reading: MiScaleReading) -> NullableJSON {
        NullableJSON([
            ("weight", .number(reading.weightKilograms)), ("unit", .string(reading.unit.rawValue)),
            ("stabilized", .boolean(reading.stabilized)), ("loadRemoved", .boolean(reading.loadRemoved)),
            ("impedance", .integer(reading.impedance)), ("timestamp", .string(reading.clock.iso8601)),
        ])
    }
}

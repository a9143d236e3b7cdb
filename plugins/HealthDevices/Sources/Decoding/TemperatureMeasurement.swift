public import GATTDecoding

/// One Temperature Measurement (0x2A1C) indication, decoded.
///
/// Layout from the Health Thermometer Service v1.0 and the GATT Specification Supplement: a
/// flags octet (bit 0 unit: 0 Celsius, 1 Fahrenheit; bit 1 time stamp; bit 2 temperature type),
/// the temperature as a 32-bit FLOAT (not SFLOAT), a Date Time, and the Temperature Type (uint8).
public struct TemperatureMeasurement: Hashable, Sendable {
    public enum TemperatureUnit: String, Hashable, Sendable { case degC, degF }

    public var flags: UInt8
    public var unit: TemperatureUnit
    /// As sent, in ``unit``.
    public var temperature: MedicalFloat
    public var timestamp: DeviceTimestamp?
    /// The Temperature Type code as sent (1 armpit … 9 tympanum).
    public var temperatureTypeCode: UInt8?

    public init(
        flags: UInt8, unit: TemperatureUnit, temperature: MedicalFloat, timestamp: DeviceTimestamp?,
        temperatureTypeCode: UInt8?
    ) {
        self.flags = flags
        self.unit = unit
        self.temperature = temperature
        self.timestamp = timestamp
        self.temperatureTypeCode = temperatureTypeCode
    }

    /// The temperature in degrees Celsius; nil for a special value.
    public var celsius: Double? {
        guard let number = temperature.number else { return nil }
        return unit == .degF ? (number - 32) * 5 / 9 : number
    }

    /// The Temperature Type's name (GATT Specification Supplement, Temperature Type 0x2A1D);
    /// nil when absent or reserved (0, 10-255).
    public var temperatureType: String? {
        guard let code = temperatureTypeCode, (1...9).contains(code) else { return nil }
        return ["armpit", "body", "ear", "finger", "gastrointestinalTract", "mouth", "rectum", "toe", "tympanum"][
            Int(code) - 1]
    }
}

/// Decodes Temperature Measurement payloads. Pure.
public enum TemperatureMeasurementDecoder {
    static let fahrenheit: UInt8 = 0x01
    static let timestampPresent: UInt8 = 0x02
    static let typePresent: UInt8 = 0x04

    /// Decodes one payload; bytes after the announced fields are ignored.
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(HealthDecodingError) -> TemperatureMeasurement {
        var reader = HealthPayloadReader(payload, .temperatureMeasurement)
        let flags = try reader.uint8("flags")
        let temperature = try reader.float("temperature")
        let timestamp = flags & timestampPresent != 0 ? try reader.timestamp("timestamp") : nil
        let type = flags & typePresent != 0 ? try reader.uint8("temperatureType") : nil
        return TemperatureMeasurement(
            flags: flags, unit: flags & fahrenheit != 0 ? .degF : .degC, temperature: temperature,
            timestamp: timestamp, temperatureTypeCode: type)
    }
}

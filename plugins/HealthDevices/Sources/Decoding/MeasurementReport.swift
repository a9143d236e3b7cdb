import GATTDecoding
/// A decoded measurement as `healthgate decode` prints it: one JSON object, values in the units of
/// the samples they become, null for absent fields and for special values (NaN, NRes, ±INFINITY,
/// reserved, "unknown user", an unsuccessful weighing).
public struct MeasurementReport: Encodable, Hashable, Sendable {
    /// One printed value.
    public enum Value: Hashable, Sendable {
        case number(Double)
        case integer(Int)
        case string(String)
        case bool(Bool)
        case null
    }

    /// The fields by key.
    public var fields: [String: Value]

    public init(_ fields: [String: Value]) {
        self.fields = fields
    }

    public subscript(key: String) -> Value? { fields[key] }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, value) in fields {
            let codingKey = Key(stringValue: key)
            switch value {
            case .number(let number): try container.encode(number, forKey: codingKey)
            case .integer(let integer): try container.encode(integer, forKey: codingKey)
            case .string(let string): try container.encode(string, forKey: codingKey)
            case .bool(let bool): try container.encode(bool, forKey: codingKey)
            case .null: try container.encodeNil(forKey: codingKey)
            }
        }
    }
}

extension MeasurementReport.Value {
    static func number(_ value: Double?) -> Self { value.map(Self.number) ?? .null }
    static func integer(_ value: Int?) -> Self { value.map(Self.integer) ?? .null }
    static func string(_ value: String?) -> Self { value.map(Self.string) ?? .null }
}

extension WeightMeasurement {
    /// weight (kg), bmi, height (m), userID, unit ("SI" | "imperial", as sent), timestamp.
    public var report: MeasurementReport {
        MeasurementReport([
            "weight": .number(weight), "bmi": .number(bmi), "height": .number(height), "userID": .integer(userID),
            "unit": .string(imperial ? "imperial" : "SI"), "timestamp": .string(timestamp?.rfc3339),
        ])
    }
}

extension BodyCompositionMeasurement {
    /// bodyFatPercentage (%), weight (kg), height (m), userID, unit ("SI" | "imperial", as sent),
    /// timestamp, basalMetabolism (kJ), musclePercentage (%), muscleMass, fatFreeMass,
    /// softLeanMass, bodyWaterMass (kg), impedance (ohm), multiplePacket (the Multiple Packet
    /// Measurement flag: the record continues in another indication).
    public var report: MeasurementReport {
        MeasurementReport([
            "bodyFatPercentage": .number(bodyFatPercentage), "weight": .number(weight), "height": .number(height),
            "userID": .integer(userID), "unit": .string(imperial ? "imperial" : "SI"),
            "timestamp": .string(timestamp?.rfc3339), "basalMetabolism": .integer(basalMetabolism),
            "musclePercentage": .number(musclePercentage), "muscleMass": .number(muscleMass),
            "fatFreeMass": .number(fatFreeMass), "softLeanMass": .number(softLeanMass),
            "bodyWaterMass": .number(bodyWaterMass), "impedance": .number(impedance),
            "multiplePacket": .bool(isMultiplePacket),
        ])
    }
}

extension BloodPressureMeasurement {
    /// systolic, diastolic, meanArterialPressure (mmHg, converted from kPa when sent so),
    /// pulseRate (count/min), userID, measurementStatus, unit (as sent), timestamp.
    public var report: MeasurementReport {
        MeasurementReport([
            "systolic": .number(millimetersOfMercury(systolic)), "diastolic": .number(millimetersOfMercury(diastolic)),
            "meanArterialPressure": .number(millimetersOfMercury(meanArterialPressure)),
            "pulseRate": .number(pulseRate?.number), "userID": .integer(userID),
            "measurementStatus": .integer(measurementStatus.map(Int.init)), "unit": .string(unit.rawValue),
            "timestamp": .string(timestamp?.rfc3339),
        ])
    }
}

extension TemperatureMeasurement {
    /// temperature (degC, converted from degF when sent so), unit (as sent), temperatureType,
    /// timestamp.
    public var report: MeasurementReport {
        MeasurementReport([
            "temperature": .number(celsius), "unit": .string(unit.rawValue), "temperatureType": .string(temperatureType),
            "timestamp": .string(timestamp?.rfc3339),
        ])
    }
}

extension GlucoseMeasurement {
    /// sequenceNumber, concentration (mg/dL), unit (as sent), timeOffset (min), timestamp (base
    /// time plus offset), baseTime, type, sampleLocation, sensorStatus, contextFollows.
    public var report: MeasurementReport {
        MeasurementReport([
            "sequenceNumber": .integer(sequenceNumber), "concentration": .number(milligramsPerDeciliter),
            "unit": concentration == nil ? .null : .string(unit.rawValue), "timeOffset": .integer(timeOffset),
            "timestamp": .string(timestamp.rfc3339), "baseTime": .string(baseTime.rfc3339), "type": .string(type),
            "sampleLocation": .string(sampleLocation), "sensorStatus": .integer(sensorStatus.map(Int.init)),
            "contextFollows": .bool(contextFollows),
        ])
    }
}

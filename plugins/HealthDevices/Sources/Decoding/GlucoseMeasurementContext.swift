public import GATTDecoding
public import HealthModel

/// One Glucose Measurement Context (0x2A34) notification: what was going on when the Glucose
/// Measurement with the same sequence number was taken.
///
/// Layout from the Glucose Service v1.0 and the GATT Specification Supplement: flags (bit 0
/// carbohydrate, bit 1 meal, bit 2 tester and health, bit 3 exercise, bit 4 medication, bit 5
/// medication in litres rather than kilograms, bit 6 HbA1c, bit 7 extended flags), the sequence
/// number (uint16), the extended flags (uint8), the carbohydrate ID (uint8) and amount (SFLOAT,
/// kg), the meal (uint8), tester (low nibble) and health (high nibble), the exercise duration
/// (uint16, s) and intensity (uint8, %), the medication ID (uint8) and amount (SFLOAT, kg or L),
/// and HbA1c (SFLOAT, %).
public struct GlucoseMeasurementContext: Hashable, Sendable {
    public var flags: UInt8
    public var sequenceNumber: Int
    public var carbohydrateID: UInt8?
    /// Kilograms.
    public var carbohydrate: MedicalFloat?
    public var mealCode: UInt8?
    public var testerCode: UInt8?
    public var healthCode: UInt8?
    /// Seconds; 0xFFFF means "overrun".
    public var exerciseDuration: Int?
    /// Percent.
    public var exerciseIntensity: Int?
    public var medicationID: UInt8?
    /// Kilograms, or litres when ``medicationInLiters``.
    public var medication: MedicalFloat?
    public var medicationInLiters: Bool
    /// Percent.
    public var hbA1c: MedicalFloat?

    /// The Carbohydrate ID's name; nil when absent or reserved.
    public var carbohydrateName: String? {
        Self.name(carbohydrateID, ["breakfast", "lunch", "dinner", "snack", "drink", "supper", "brunch"])
    }
    /// The Meal's name; nil when absent or reserved.
    public var meal: String? { Self.name(mealCode, ["preprandial", "postprandial", "fasting", "casual", "bedtime"]) }
    /// The Tester's name; nil when absent or reserved.
    public var tester: String? {
        testerCode == 15 ? "notAvailable" : Self.name(testerCode, ["self", "healthCareProfessional", "labTest"])
    }
    /// The Health's name; nil when absent or reserved.
    public var health: String? {
        healthCode == 15
            ? "notAvailable"
            : Self.name(healthCode, ["minorHealthIssues", "majorHealthIssues", "duringMenses", "underStress", "noHealthIssues"])
    }
    /// The Medication ID's name; nil when absent or reserved.
    public var medicationName: String? {
        Self.name(medicationID, [
            "rapidActingInsulin", "shortActingInsulin", "intermediateActingInsulin", "longActingInsulin",
            "premixedInsulin",
        ])
    }

    static func name(_ code: UInt8?, _ names: [String]) -> String? {
        guard let code, code >= 1, Int(code) <= names.count else { return nil }
        return names[Int(code) - 1]
    }

    /// The context as metadata for the glucose sample it belongs to; special values are left out.
    public var metadata: Metadata {
        var metadata = Metadata()
        func set(_ key: String, _ value: MetadataValue?) {
            if let value { metadata[MetadataKey("healthgate.glucoseContext.\(key)")] = value }
        }
        set("carbohydrate", carbohydrateName.map(MetadataValue.string))
        set("carbohydrateGrams", carbohydrate?.number.map { .double($0 * 1000) })
        set("meal", meal.map(MetadataValue.string))
        set("tester", tester.map(MetadataValue.string))
        set("health", health.map(MetadataValue.string))
        set("exerciseDurationSeconds", exerciseDuration.flatMap { $0 == 0xFFFF ? nil : .integer(Int64($0)) })
        set("exerciseIntensityPercent", exerciseIntensity.map { .integer(Int64($0)) })
        set("medication", medicationName.map(MetadataValue.string))
        if let amount = medication?.number {
            // Litres to millilitres, kilograms to milligrams.
            set(medicationInLiters ? "medicationMilliliters" : "medicationMilligrams",
                .double(medicationInLiters ? amount * 1000 : amount * 1_000_000))
        }
        set("hbA1cPercent", hbA1c?.number.map(MetadataValue.double))
        return metadata
    }
}

/// Decodes Glucose Measurement Context payloads. Pure.
public enum GlucoseMeasurementContextDecoder {
    /// Decodes one payload; bytes after the announced fields are ignored.
    /// - Throws: ``HealthDecodingError`` `.truncated` naming the cut field.
    public static func decode(_ payload: [UInt8]) throws(HealthDecodingError) -> GlucoseMeasurementContext {
        var reader = HealthPayloadReader(payload, .glucoseMeasurementContext)
        let flags = try reader.uint8("flags")
        var context = GlucoseMeasurementContext(
            flags: flags, sequenceNumber: Int(try reader.uint16("sequenceNumber")), medicationInLiters: flags & 0x20 != 0)
        if flags & 0x80 != 0 { _ = try reader.uint8("extendedFlags") }
        if flags & 0x01 != 0 {
            context.carbohydrateID = try reader.uint8("carbohydrateID")
            context.carbohydrate = try reader.sfloat("carbohydrate")
        }
        if flags & 0x02 != 0 { context.mealCode = try reader.uint8("meal") }
        if flags & 0x04 != 0 {
            let testerHealth = try reader.uint8("testerHealth")
            context.testerCode = testerHealth & 0x0F
            context.healthCode = testerHealth >> 4
        }
        if flags & 0x08 != 0 {
            context.exerciseDuration = Int(try reader.uint16("exerciseDuration"))
            context.exerciseIntensity = Int(try reader.uint8("exerciseIntensity"))
        }
        if flags & 0x10 != 0 {
            context.medicationID = try reader.uint8("medicationID")
            context.medication = try reader.sfloat("medication")
        }
        if flags & 0x40 != 0 { context.hbA1c = try reader.sfloat("hbA1c") }
        return context
    }
}

extension GlucoseMeasurementContext {
    init(flags: UInt8, sequenceNumber: Int, medicationInLiters: Bool) {
        self.flags = flags
        self.sequenceNumber = sequenceNumber
        self.medicationInLiters = medicationInLiters
    }
}

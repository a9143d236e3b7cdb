/// How values of a quantity type combine over time (HKQuantityAggregationStyle).
public enum AggregationStyle: String, Hashable, Sendable, Codable {
    /// Values add up: steps, distance, energy. Statistics report a sum.
    case cumulative
    /// Each value stands alone: heart rate, speed. Statistics report average, minimum, maximum
    /// and the most recent value.
    case discrete
}

/// A kind of measurement, like HealthKit's HKQuantityType, with its canonical unit and
/// aggregation style. A sample's unit must have the dimension of the canonical unit.
///
/// A type's fields live in one immutable object that its copies share, so a sample carries its
/// type as one reference (the built-in types are made once, as static members).
public struct QuantityType: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline final class Fields: Sendable {
        @usableFromInline let identifier: String
        @usableFromInline let canonicalUnit: HealthUnit
        @usableFromInline let aggregationStyle: AggregationStyle
        @usableFromInline let fractionDigits: Int
        let seriesPolicy: QuantitySeriesPolicy?

        init(
            identifier: String, canonicalUnit: HealthUnit, aggregationStyle: AggregationStyle, fractionDigits: Int,
            seriesPolicy: QuantitySeriesPolicy?
        ) {
            self.identifier = identifier
            self.canonicalUnit = canonicalUnit
            self.aggregationStyle = aggregationStyle
            self.fractionDigits = fractionDigits
            self.seriesPolicy = seriesPolicy
        }
    }

    @usableFromInline let fields: Fields

    /// The stable identifier used in JSON, SQLite and the CLI, for example `heartRate`.
    @inlinable public var identifier: String { fields.identifier }
    /// The unit values are stored and reported in.
    @inlinable public var canonicalUnit: HealthUnit { fields.canonicalUnit }
    /// How values combine.
    @inlinable public var aggregationStyle: AggregationStyle { fields.aggregationStyle }
    /// How many decimals a value in the canonical unit is printed with for people: what the
    /// measurement means, not every digit a device or a conversion gives (`72` count/min,
    /// `36.8` degC, `1.78` m, whole steps). Every text output uses it (the CLI's tables, the
    /// demo's live lines, workout summaries); JSON and CSV keep every digit. Not part of the
    /// type's identity.
    @inlinable public var fractionDigits: Int { fields.fractionDigits }
    /// Whether the store keeps this type's readings as quantity series, and how it cuts them
    /// (``QuantitySeriesPolicy``); nil: every reading is a sample of its own. Not part of the
    /// type's identity.
    public var seriesPolicy: QuantitySeriesPolicy? { fields.seriesPolicy }

    /// Creates a quantity type. Use the static members for the built-in types.
    /// `fractionDigits` is clamped to 0…6.
    public init(
        identifier: String, canonicalUnit: HealthUnit, aggregationStyle: AggregationStyle, fractionDigits: Int,
        seriesPolicy: QuantitySeriesPolicy? = nil
    ) {
        fields = Fields(
            identifier: identifier, canonicalUnit: canonicalUnit, aggregationStyle: aggregationStyle,
            fractionDigits: min(max(fractionDigits, 0), 6), seriesPolicy: seriesPolicy)
    }

    public static func == (lhs: QuantityType, rhs: QuantityType) -> Bool {
        let (a, b) = (lhs.fields, rhs.fields)
        return a === b
            || (a.identifier == b.identifier && a.canonicalUnit == b.canonicalUnit && a.aggregationStyle == b.aggregationStyle)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(canonicalUnit)
        hasher.combine(aggregationStyle)
    }

    /// Whether a quantity in `unit` may be recorded as this type.
    public func accepts(_ unit: HealthUnit) -> Bool {
        unit.isCompatible(with: canonicalUnit)
    }

    public var description: String { identifier }

    /// Heart rate in beats per minute (`count/min`), discrete.
    public static let heartRate = QuantityType(
        identifier: "heartRate", canonicalUnit: .countPerMinute, aggregationStyle: .discrete, fractionDigits: 0, seriesPolicy: .stream)
    /// Steps (`count`), cumulative.
    public static let stepCount = QuantityType(
        identifier: "stepCount", canonicalUnit: .count, aggregationStyle: .cumulative, fractionDigits: 0)
    /// Walking and running distance (`m`), cumulative.
    public static let distanceWalkingRunning = QuantityType(
        identifier: "distanceWalkingRunning", canonicalUnit: .meter, aggregationStyle: .cumulative, fractionDigits: 1)
    /// Running speed (`m/s`), discrete.
    public static let runningSpeed = QuantityType(
        identifier: "runningSpeed", canonicalUnit: .meterPerSecond, aggregationStyle: .discrete, fractionDigits: 2, seriesPolicy: .stream)
    /// Running stride length (`m`), discrete.
    public static let runningStrideLength = QuantityType(
        identifier: "runningStrideLength", canonicalUnit: .meter, aggregationStyle: .discrete, fractionDigits: 2, seriesPolicy: .stream)
    /// Active energy burned (`kcal`), cumulative.
    public static let activeEnergyBurned = QuantityType(
        identifier: "activeEnergyBurned", canonicalUnit: .kilocalorie, aggregationStyle: .cumulative, fractionDigits: 0)
    /// Heart-rate variability as SDNN (`ms`), discrete.
    public static let heartRateVariabilitySDNN = QuantityType(
        identifier: "heartRateVariabilitySDNN", canonicalUnit: .millisecond,
        aggregationStyle: .discrete, fractionDigits: 1)
    /// Heart-rate variability as RMSSD (`ms`), discrete: the root mean square of successive
    /// differences of NN intervals. HealthKit has no RMSSD type; this is healthgate's own.
    public static let heartRateVariabilityRMSSD = QuantityType(
        identifier: "heartRateVariabilityRMSSD", canonicalUnit: .millisecond, aggregationStyle: .discrete, fractionDigits: 1)
    /// Cycling speed (`m/s`), discrete (HKQuantityTypeIdentifier.cyclingSpeed).
    public static let cyclingSpeed = QuantityType(
        identifier: "cyclingSpeed", canonicalUnit: .meterPerSecond, aggregationStyle: .discrete, fractionDigits: 2, seriesPolicy: .stream)
    /// Cycling cadence, crank revolutions per minute (`count/min`), discrete
    /// (HKQuantityTypeIdentifier.cyclingCadence).
    public static let cyclingCadence = QuantityType(
        identifier: "cyclingCadence", canonicalUnit: .countPerMinute, aggregationStyle: .discrete, fractionDigits: 0, seriesPolicy: .stream)
    /// Cycling power (`W`), discrete (HKQuantityTypeIdentifier.cyclingPower).
    public static let cyclingPower = QuantityType(
        identifier: "cyclingPower", canonicalUnit: .watt, aggregationStyle: .discrete, fractionDigits: 0, seriesPolicy: .stream)
    /// Cycling distance (`m`), cumulative (HKQuantityTypeIdentifier.distanceCycling).
    public static let distanceCycling = QuantityType(
        identifier: "distanceCycling", canonicalUnit: .meter, aggregationStyle: .cumulative, fractionDigits: 1)
    /// Rowing distance (`m`), cumulative (HKQuantityTypeIdentifier.distanceRowing).
    public static let distanceRowing = QuantityType(
        identifier: "distanceRowing", canonicalUnit: .meter, aggregationStyle: .cumulative, fractionDigits: 1)
    /// Rowing speed (`m/s`), discrete (HKQuantityTypeIdentifier.rowingSpeed).
    public static let rowingSpeed = QuantityType(
        identifier: "rowingSpeed", canonicalUnit: .meterPerSecond, aggregationStyle: .discrete, fractionDigits: 2, seriesPolicy: .stream)
    /// Running power (`W`), discrete (HKQuantityTypeIdentifier.runningPower): a treadmill's
    /// power output.
    public static let runningPower = QuantityType(
        identifier: "runningPower", canonicalUnit: .watt, aggregationStyle: .discrete, fractionDigits: 0, seriesPolicy: .stream)
    /// Rowing power (`W`), discrete. HealthKit has no rowing power type; this is healthgate's own,
    /// so a rower's power is not recorded as cycling power.
    public static let rowingPower = QuantityType(
        identifier: "rowingPower", canonicalUnit: .watt, aggregationStyle: .discrete, fractionDigits: 0, seriesPolicy: .stream)
    /// Rowing stroke rate, strokes per minute (`count/min`), discrete: a rower's cadence.
    /// HealthKit has no stroke-rate type for rowing; this is healthgate's own.
    public static let rowingStrokeRate = QuantityType(
        identifier: "rowingStrokeRate", canonicalUnit: .countPerMinute, aggregationStyle: .discrete, fractionDigits: 1, seriesPolicy: .stream)
    /// Body mass (`kg`), discrete (HKQuantityTypeIdentifier.bodyMass).
    public static let bodyMass = QuantityType(
        identifier: "bodyMass", canonicalUnit: .kilogram, aggregationStyle: .discrete, fractionDigits: 1)
    /// Body mass index (`count`, a plain number as HealthKit records it), discrete.
    public static let bodyMassIndex = QuantityType(
        identifier: "bodyMassIndex", canonicalUnit: .count, aggregationStyle: .discrete, fractionDigits: 1)
    /// Height (`m`), discrete.
    public static let height = QuantityType(
        identifier: "height", canonicalUnit: .meter, aggregationStyle: .discrete, fractionDigits: 2)
    /// Body fat percentage (`%`), discrete.
    public static let bodyFatPercentage = QuantityType(
        identifier: "bodyFatPercentage", canonicalUnit: .percent, aggregationStyle: .discrete, fractionDigits: 1)
    /// Lean body mass (`kg`), discrete.
    public static let leanBodyMass = QuantityType(
        identifier: "leanBodyMass", canonicalUnit: .kilogram, aggregationStyle: .discrete, fractionDigits: 1)
    /// Systolic blood pressure (`mmHg`), discrete; recorded inside a `bloodPressure` correlation.
    public static let bloodPressureSystolic = QuantityType(
        identifier: "bloodPressureSystolic", canonicalUnit: .millimeterOfMercury, aggregationStyle: .discrete, fractionDigits: 0)
    /// Diastolic blood pressure (`mmHg`), discrete; recorded inside a `bloodPressure` correlation.
    public static let bloodPressureDiastolic = QuantityType(
        identifier: "bloodPressureDiastolic", canonicalUnit: .millimeterOfMercury, aggregationStyle: .discrete, fractionDigits: 0)
    /// Body temperature (`degC`), discrete.
    public static let bodyTemperature = QuantityType(
        identifier: "bodyTemperature", canonicalUnit: .degreeCelsius, aggregationStyle: .discrete, fractionDigits: 1)
    /// Blood oxygen saturation, SpO2 (`%`), discrete.
    public static let oxygenSaturation = QuantityType(
        identifier: "oxygenSaturation", canonicalUnit: .percent, aggregationStyle: .discrete, fractionDigits: 0)
    /// Peripheral perfusion index (`%`), discrete.
    public static let peripheralPerfusionIndex = QuantityType(
        identifier: "peripheralPerfusionIndex", canonicalUnit: .percent, aggregationStyle: .discrete, fractionDigits: 1)
    /// Blood glucose (`mg/dL`), discrete; also accepts HealthKit's molar unit
    /// `mmol<180.15588000005408>/L`, which has the dimension of mass per volume.
    public static let bloodGlucose = QuantityType(
        identifier: "bloodGlucose", canonicalUnit: .milligramPerDeciliter, aggregationStyle: .discrete, fractionDigits: 0)
    /// Respiratory rate, breaths per minute (`count/min`), discrete
    /// (HKQuantityTypeIdentifier.respiratoryRate).
    public static let respiratoryRate = QuantityType(
        identifier: "respiratoryRate", canonicalUnit: .countPerMinute, aggregationStyle: .discrete, fractionDigits: 0)

    /// Every built-in type, in a fixed order.
    public static let builtIn: [QuantityType] = [
        .heartRate, .stepCount, .distanceWalkingRunning, .runningSpeed, .runningStrideLength,
        .activeEnergyBurned, .heartRateVariabilitySDNN, .heartRateVariabilityRMSSD, .cyclingSpeed, .cyclingCadence, .cyclingPower,
        .distanceCycling, .distanceRowing, .rowingSpeed, .runningPower, .rowingPower, .rowingStrokeRate,
        .bodyMass, .bodyMassIndex, .height, .bodyFatPercentage, .leanBodyMass,
        .bloodPressureSystolic, .bloodPressureDiastolic, .bodyTemperature, .oxygenSaturation,
        .peripheralPerfusionIndex, .bloodGlucose, .respiratoryRate,
    ]

    /// The built-in type with this identifier, or a generic observation's type
    /// (``MDCNomenclature/genericType(observation:unit:)``, `mdc.150456.544`); nil for any other.
    public static func named(_ identifier: String) -> QuantityType? {
        builtIn.first { $0.identifier == identifier } ?? MDCNomenclature.genericType(named: identifier)
    }
}

extension QuantityType: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let identifier = try container.decode(String.self)
        guard let type = QuantityType.named(identifier) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "unknown quantity type \"\(identifier)\"; known: "
                    + QuantityType.builtIn.map(\.identifier).joined(separator: ", "))
        }
        self = type
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(identifier)
    }
}

import Foundation
import HealthModel
import XCTest

final class QuantityTypeTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 7, milliseconds: { 1_800_000_000_000 })
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Each type's printed decimals: counts are whole (steps, beats per minute), and no type
    /// shows more digits than a device measures it to.
    func testEveryBuiltInTypeDeclaresItsDecimals() {
        for type in QuantityType.builtIn {
            XCTAssertTrue((0...2).contains(type.fractionDigits), "\(type): \(type.fractionDigits)")
            if type.canonicalUnit == .count, type.aggregationStyle == .cumulative { XCTAssertEqual(type.fractionDigits, 0, "\(type)") }
        }
        XCTAssertEqual(QuantityType.heartRate.fractionDigits, 0)
        XCTAssertEqual(QuantityType.bodyTemperature.fractionDigits, 1)
        XCTAssertEqual(QuantityType.heartRateVariabilitySDNN.fractionDigits, 1)
        XCTAssertEqual(QuantityType(identifier: "x", canonicalUnit: .count, aggregationStyle: .discrete, fractionDigits: 9).fractionDigits, 6)
    }

    func testEveryBuiltInTypeHasItsCanonicalUnitAndAggregationStyle() {
        let expected: [(QuantityType, String, AggregationStyle)] = [
            (.heartRate, "count/min", .discrete),
            (.stepCount, "count", .cumulative),
            (.distanceWalkingRunning, "m", .cumulative),
            (.runningSpeed, "m/s", .discrete),
            (.runningStrideLength, "m", .discrete),
            (.activeEnergyBurned, "kcal", .cumulative),
            (.heartRateVariabilitySDNN, "ms", .discrete),
            (.heartRateVariabilityRMSSD, "ms", .discrete),
            (.cyclingSpeed, "m/s", .discrete),
            (.cyclingCadence, "count/min", .discrete),
            (.cyclingPower, "W", .discrete),
            (.distanceCycling, "m", .cumulative),
            (.distanceRowing, "m", .cumulative),
            (.rowingSpeed, "m/s", .discrete),
            (.runningPower, "W", .discrete),
            (.rowingPower, "W", .discrete),
            (.rowingStrokeRate, "count/min", .discrete),
            (.bodyMass, "kg", .discrete),
            (.bodyMassIndex, "count", .discrete),
            (.height, "m", .discrete),
            (.bodyFatPercentage, "%", .discrete),
            (.leanBodyMass, "kg", .discrete),
            (.bloodPressureSystolic, "mmHg", .discrete),
            (.bloodPressureDiastolic, "mmHg", .discrete),
            (.bodyTemperature, "degC", .discrete),
            (.oxygenSaturation, "%", .discrete),
            (.peripheralPerfusionIndex, "%", .discrete),
            (.bloodGlucose, "mg/dL", .discrete),
            (.respiratoryRate, "count/min", .discrete),
        ]
        XCTAssertEqual(QuantityType.builtIn, expected.map(\.0), "builtIn lists every type, in order")
        for (type, unit, style) in expected {
            XCTAssertEqual(type.canonicalUnit.unitString, unit, type.identifier)
            XCTAssertEqual(type.aggregationStyle, style, type.identifier)
            XCTAssertEqual(QuantityType.named(type.identifier), type)
            XCTAssertTrue(type.accepts(type.canonicalUnit))
        }
        XCTAssertNil(QuantityType.named("bloodAlcoholContent"))
    }

    func testSampleWithAUnitOfTheWrongDimensionIsRejected() throws {
        let rows: [(QuantityType, String)] = [
            (.heartRate, "count"), (.heartRate, "Hz"), (.heartRate, "%"), (.stepCount, "%"),
            (.stepCount, "count/min"), (.distanceWalkingRunning, "s"), (.runningSpeed, "m"),
            (.activeEnergyBurned, "kg"), (.heartRateVariabilitySDNN, "m"),
            (.runningStrideLength, "m/s"),
            (.cyclingPower, "J"), (.cyclingPower, "kcal"), (.cyclingCadence, "Hz"), (.cyclingSpeed, "m"),
            (.distanceCycling, "m/s"), (.distanceRowing, "count"), (.rowingSpeed, "W"),
            (.runningPower, "m/s"), (.rowingPower, "count/min"), (.rowingStrokeRate, "W"),
            (.bodyMass, "m"), (.bodyMassIndex, "kg/m^2"), (.height, "kg"), (.bodyFatPercentage, "count"),
            (.bloodPressureSystolic, "mmHg/s"), (.bodyTemperature, "J"), (.oxygenSaturation, "count"),
            (.bloodGlucose, "mg"), (.bloodGlucose, "mmol<180.15588000005408>"),
        ]
        for (type, unitText) in rows {
            let unit = try HealthUnit(unitText)
            XCTAssertFalse(type.accepts(unit), "\(type) in \(unitText)")
            XCTAssertThrowsError(
                try QuantitySample(
                    id: ids.next(), type: type, quantity: Quantity(1, unit), start: start, end: start)
            ) { error in
                XCTAssertEqual(
                    error as? SampleError,
                    .unitMismatch(
                        type: type.identifier, unit: unitText, expected: type.canonicalUnit.unitString))
            }
        }
    }

    func testCanonicalValueConvertsIntoTheCanonicalUnit() throws {
        let rows: [(QuantityType, Double, String, Double)] = [
            (.heartRate, 1.5, "count/s", 90),
            (.heartRate, 72, "count/min", 72),
            (.distanceWalkingRunning, 1.5, "km", 1500),
            (.distanceWalkingRunning, 1, "mi", 1609.344),
            (.runningSpeed, 36, "km/hr", 10),
            (.activeEnergyBurned, 300, "kJ", 71.70172084130019),
            (.activeEnergyBurned, 2000, "cal", 2),
            (.heartRateVariabilitySDNN, 0.045, "s", 45),
            (.runningStrideLength, 100, "cm", 1),
            (.stepCount, 12, "count", 12),
            (.cyclingPower, 0.25, "kW", 250),
            (.cyclingPower, 250, "W", 250),
            (.cyclingPower, 900, "kJ/hr", 250),
            (.cyclingPower, 250, "J/s", 250),
            (.cyclingSpeed, 36, "km/hr", 10),
            (.cyclingCadence, 1.5, "count/s", 90),
            (.distanceCycling, 2, "km", 2000),
            (.distanceRowing, 500, "m", 500),
            (.rowingSpeed, 7.2, "km/hr", 2),
            (.runningPower, 0.3, "kW", 300),
            (.rowingPower, 180, "J/s", 180),
            (.rowingStrokeRate, 0.5, "count/s", 30),
            (.bodyMass, 100, "lb", 45.359237),
            (.bodyMass, 11, "st", 69.853225),
            (.leanBodyMass, 55_000, "g", 55),
            (.height, 70, "in", 1.778),
            (.height, 180, "cm", 1.8),
            (.bloodPressureSystolic, 16, "kPa", 120.0098),
            (.bloodPressureDiastolic, 80, "mmHg", 80),
            (.bodyTemperature, 98.6, "degF", 37),
            (.bodyTemperature, 310.15, "K", 37),
            (.oxygenSaturation, 97, "%", 97),
            (.bloodGlucose, 5.5, "mmol<180.15588000005408>/L", 99.085734),
            (.bloodGlucose, 1, "g/L", 100),
            (.bloodGlucose, 0.001, "kg/L", 100),
        ]
        for (type, value, unitText, expected) in rows {
            let sample = try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(value, try HealthUnit(unitText)),
                start: start, end: start.addingTimeInterval(60))
            XCTAssertEqual(sample.canonicalValue, expected, accuracy: 1e-4, "\(value) \(unitText)")
            XCTAssertEqual(sample.quantity.value, value, "the recorded value is kept as given")
            XCTAssertEqual(sample.quantity.unit.unitString, unitText)
        }
    }

    func testSampleValidation() throws {
        XCTAssertThrowsError(
            try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(.nan, .countPerMinute),
                start: start, end: start)
        ) { XCTAssertEqual($0 as? SampleError, .notFinite(type: "heartRate")) }
        XCTAssertThrowsError(
            try QuantitySample(
                id: ids.next(), type: .stepCount, quantity: Quantity(.infinity, .count),
                start: start, end: start)
        ) { XCTAssertEqual($0 as? SampleError, .notFinite(type: "stepCount")) }
        XCTAssertThrowsError(
            try QuantitySample(
                id: ids.next(), type: .stepCount, quantity: Quantity(10, .count),
                start: start, end: start.addingTimeInterval(-1))
        ) { XCTAssertEqual($0 as? SampleError, .endBeforeStart) }
        XCTAssertThrowsError(
            try HeartbeatSeriesSample(
                id: ids.next(), start: start, end: start.addingTimeInterval(2),
                beats: [
                    Heartbeat(timeSinceSeriesStart: 0.8, precededByGap: false),
                    Heartbeat(timeSinceSeriesStart: 0.7, precededByGap: false),
                ])
        ) { XCTAssertEqual($0 as? SampleError, .heartbeatsOutOfOrder) }
        XCTAssertThrowsError(
            try HeartbeatSeriesSample(
                id: ids.next(), start: start, end: start,
                beats: [Heartbeat(timeSinceSeriesStart: -0.1, precededByGap: false)])
        ) { XCTAssertEqual($0 as? SampleError, .heartbeatsOutOfOrder) }
    }

    func testQuantityTypeCodesAsItsIdentifier() throws {
        let data = try JSONEncoder().encode(QuantityType.builtIn)
        XCTAssertEqual(try JSONDecoder().decode([QuantityType].self, from: data), QuantityType.builtIn)
        XCTAssertThrowsError(try JSONDecoder().decode([QuantityType].self, from: Data(#"["bogus"]"#.utf8))) {
            guard case .dataCorrupted(let context)? = $0 as? DecodingError else { return XCTFail("\($0)") }
            XCTAssertTrue(context.debugDescription.contains("unknown quantity type \"bogus\""))
            XCTAssertTrue(context.debugDescription.contains("heartRate"), "lists the known types")
        }
    }
}

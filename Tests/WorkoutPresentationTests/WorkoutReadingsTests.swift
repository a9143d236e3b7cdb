import Foundation
import HealthModel
import WorkoutPresentation
import XCTest

/// What a stored workout's chart and export draw (``WorkoutReadings``): each type's raw samples
/// while every 5-second step of its curve still has one, the type's curve points as samples once
/// retention pruned any, and the raw samples of a type without a curve.
final class WorkoutReadingsTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let ids = SampleIDGenerator(seed: 9)

    /// A minute's workout with one reading a second of heart rate and of cycling power.
    func workout() -> Workout {
        Workout(id: ids.next(), activityType: .cycling, startDate: start, endDate: start.addingTimeInterval(60), duration: 60)
    }

    func readings(_ type: QuantityType, _ unit: HealthUnit, seconds: ClosedRange<Int>, value: (Int) -> Double) throws -> [QuantitySample] {
        try seconds.map { second in
            let date = start.addingTimeInterval(Double(second))
            return try QuantitySample(id: ids.next(), type: type, quantity: Quantity(value(second), unit), start: date, end: date)
        }
    }

    /// The curve the store condenses `samples` to: a point every 5 s from the start, the mean.
    func curve(of samples: [QuantitySample]) -> [SeriesQuantity] {
        Dictionary(grouping: samples) { Int($0.startDate.timeIntervalSince(start)) / 5 }
            .sorted { $0.key < $1.key }
            .map { step, within in
                let begin = start.addingTimeInterval(Double(step * 5))
                return SeriesQuantity(
                    value: within.map(\.canonicalValue).reduce(0, +) / Double(within.count), start: begin, end: begin.addingTimeInterval(5))
            }
    }

    func testRawSamplesAreDrawnWhileEveryStepOfTheCurveHasOne() throws {
        let workout = workout()
        let heartRates = try readings(.heartRate, .countPerMinute, seconds: 0...59) { 100 + Double($0) }
        let readings = try WorkoutReadings(
            workout: workout, samples: heartRates, curves: [(.heartRate, curve(of: heartRates))])
        XCTAssertEqual(readings.samples, heartRates)
        XCTAssertEqual(readings.typesFromCurves, [])
        XCTAssertNil(readings.curveNote(step: .seconds(5)))
    }

    func testAPrunedTypeIsDrawnFromItsCurveAndTheOthersStayRaw() throws {
        let workout = workout()
        let heartRates = try readings(.heartRate, .countPerMinute, seconds: 0...59) { 100 + Double($0) }
        let powers = try readings(.cyclingPower, .watt, seconds: 0...59) { 200 + Double($0 % 7) }
        let heartRateCurve = curve(of: heartRates)
        // Retention pruned the heart rates of the first 20 s (a workout straddling the cutoff)
        // and left the power alone.
        let left = heartRates.filter { $0.startDate >= start.addingTimeInterval(20) }
        let readings = try WorkoutReadings(
            workout: workout, samples: left + powers,
            curves: [(.cyclingPower, curve(of: powers)), (.heartRate, heartRateCurve)])

        XCTAssertEqual(readings.typesFromCurves, [.heartRate])
        XCTAssertEqual(readings.samples.filter { $0.type == .cyclingPower }, powers)
        let drawn = readings.samples.filter { $0.type == .heartRate }
        XCTAssertEqual(drawn.count, 12, "a point every 5 s of the minute, none of the raw ones")
        XCTAssertEqual(drawn.map(\.canonicalValue), heartRateCurve.map(\.value))
        XCTAssertEqual(drawn.map(\.startDate), heartRateCurve.map(\.startDate))
        XCTAssertEqual(drawn.map(\.endDate), heartRateCurve.map(\.endDate))
        XCTAssertEqual(drawn.first?.canonicalValue, 102, "the mean of 100 … 104")
        XCTAssertEqual(readings.samples.map(\.startDate), readings.samples.map(\.startDate).sorted())
        XCTAssertEqual(
            readings.curveNote(step: .seconds(5)),
            "heartRate from the workout's 5-second curves (their raw samples were pruned: store.retentionDays)")
        // The same workout read twice gives the same samples, ids included.
        let again = try WorkoutReadings(
            workout: workout, samples: left + powers,
            curves: [(.cyclingPower, curve(of: powers)), (.heartRate, heartRateCurve)])
        XCTAssertEqual(again, readings)
    }

    func testEveryPrunedTypeIsNamedAndAWorkoutWithoutCurvesKeepsWhatIsLeft() throws {
        let workout = workout()
        let heartRates = try readings(.heartRate, .countPerMinute, seconds: 0...59) { _ in 120 }
        let powers = try readings(.cyclingPower, .watt, seconds: 0...59) { _ in 180 }
        let pruned = try WorkoutReadings(
            workout: workout, samples: [], curves: [(.heartRate, curve(of: heartRates)), (.cyclingPower, curve(of: powers))])
        XCTAssertEqual(pruned.typesFromCurves, [.cyclingPower, .heartRate])
        XCTAssertEqual(pruned.samples.count, 24)
        XCTAssertEqual(
            pruned.curveNote(step: .seconds(5)),
            "cyclingPower and heartRate from the workout's 5-second curves (their raw samples were pruned: store.retentionDays)")

        // Stored before curves were kept: what raw samples there are, as they are.
        let half = Array(heartRates.suffix(30))
        let old = try WorkoutReadings(workout: workout, samples: half, curves: [])
        XCTAssertEqual(old.samples, half)
        XCTAssertEqual(old.typesFromCurves, [])
    }

    func testACurvePointThatIsNotASampleIsAnError() throws {
        let workout = workout()
        let broken = [SeriesQuantity(value: .nan, start: start, end: start.addingTimeInterval(5))]
        XCTAssertThrowsError(try WorkoutReadings(workout: workout, samples: [], curves: [(.heartRate, broken)])) { error in
            XCTAssertEqual(error as? SampleError, .notFinite(type: "heartRate"))
        }
    }
}

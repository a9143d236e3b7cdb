import BLETesting
import FitnessEquipment
import GatewayTesting
import XCTest

/// Rates from cumulative counters: rollovers of the counters and of the event times, stops,
/// gaps, and counter jumps.
final class RevolutionRateCalculatorTests: XCTestCase {
    func wheel(_ revolutions: UInt32, _ time: UInt16, _ counter: RevolutionCounter = .cscWheel) -> RevolutionData {
        RevolutionData(cumulativeRevolutions: revolutions, lastEventTime: time, counter: counter)
    }

    func crank(_ revolutions: UInt16, _ time: UInt16) -> RevolutionData {
        RevolutionData(cumulativeRevolutions: UInt32(revolutions), lastEventTime: time, counter: .crank)
    }

    /// NordicSemiconductor/Android-BLE-Common-Library, CyclingSpeedAndCadenceMeasurementDataCallbackTest
    /// `onDistanceChanged` and `onCrankDataChanged`: 10 wheel revolutions in 1024/1024 s on a
    /// 2340 mm wheel is 23.4 m at 23.4 m/s, and one crank revolution in 1 s is 60 /min.
    func testNordicVectors() throws {
        var calculator = try CyclingSpeedCadenceCalculator(profile: .cyclingSpeedAndCadence, wheelCircumference: 2.34)
        let first = calculator.update(
            try CSCMeasurementDecoder.decode(hexBytes("03 14000000 0000 0A00 0000")), receivedAt: 0)
        XCTAssertEqual(first.wheel, .baseline)
        XCTAssertEqual(first.crank, .baseline)
        XCTAssertNil(first.speed)
        XCTAssertNil(first.cadence)
        let second = calculator.update(
            try CSCMeasurementDecoder.decode(hexBytes("03 1E000000 0004 0B00 0004")), receivedAt: 1)
        XCTAssertEqual(try XCTUnwrap(second.speed), 23.4, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(second.distance), 23.4, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(second.cadence), 60, accuracy: 1e-9)
        XCTAssertEqual(second.wheel, .moving(revolutions: 10, seconds: 1))
    }

    func testBothCountersAndEventTimesRollOver() throws {
        var calculator = try CyclingSpeedCadenceCalculator(profile: .cyclingSpeedAndCadence, wheelCircumference: 2.105)
        _ = calculator.update(wheel: wheel(0xFFFF_FFFE, 0xFE00), crank: crank(0xFFFF, 0xFC00), receivedAt: 100)
        // 4 wheel revolutions across 2^32 in 0x400 ticks (1 s) across 2^16; 2 crank
        // revolutions across 2^16 in 0x800 ticks (2 s) across 2^16.
        let result = calculator.update(wheel: wheel(0x0000_0002, 0x0200), crank: crank(0x0001, 0x0400), receivedAt: 101)
        XCTAssertEqual(result.wheel, .moving(revolutions: 4, seconds: 1))
        XCTAssertEqual(try XCTUnwrap(result.speed), 4 * 2.105, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(result.distance), 4 * 2.105, accuracy: 1e-9)
        XCTAssertEqual(result.crank, .moving(revolutions: 2, seconds: 2))
        XCTAssertEqual(try XCTUnwrap(result.cadence), 60, accuracy: 1e-9)
    }

    func testCyclingPowerWheelTimesAreIn2048ths() throws {
        var calculator = try CyclingSpeedCadenceCalculator(profile: .cyclingPower, wheelCircumference: 2)
        // CPS v1.1, Wheel Revolution Data: 0x1000 ticks of 1/2048 s is 2 s, across the event time's rollover.
        let before = try CyclingPowerMeasurementDecoder.decode(hexBytes("1000 C800 0A000000 00F8"))
        let after = try CyclingPowerMeasurementDecoder.decode(hexBytes("1000 C800 12000000 0008"))
        _ = calculator.update(before, receivedAt: 0)
        let result = calculator.update(after, receivedAt: 2)
        XCTAssertEqual(result.wheel, .moving(revolutions: 8, seconds: 2))
        XCTAssertEqual(try XCTUnwrap(result.speed), 8, accuracy: 1e-9)
        XCTAssertNil(result.crank)
        XCTAssertNil(result.cadence)
    }

    func testAStoppedWheelReportsZeroOnceAfterTheTimeout() {
        var calculator = RevolutionRateCalculator(counter: .cscWheel, stopTimeout: 3)
        XCTAssertEqual(calculator.update(wheel(100, 1024), receivedAt: 10), .baseline)
        XCTAssertEqual(calculator.update(wheel(102, 2048), receivedAt: 11), .moving(revolutions: 2, seconds: 1))
        // The sensor repeats its last event: nothing new until 3 s after the last change.
        XCTAssertEqual(calculator.update(wheel(102, 2048), receivedAt: 12), .noNewEvent)
        XCTAssertEqual(calculator.update(wheel(102, 2048), receivedAt: 13.9), .noNewEvent)
        XCTAssertEqual(calculator.update(wheel(102, 2048), receivedAt: 14), .stopped)
        XCTAssertEqual(RevolutionRateCalculator.Outcome.stopped.revolutionsPerSecond, 0)
        XCTAssertEqual(calculator.update(wheel(102, 2048), receivedAt: 15), .noNewEvent, "zero is reported once")
        XCTAssertEqual(calculator.update(wheel(102, 2048), receivedAt: 25), .noNewEvent)
        // It turns again within half the event time's wrap: one revolution in 1.5 s.
        XCTAssertEqual(calculator.update(wheel(103, 2048 + 1536), receivedAt: 26), .moving(revolutions: 1, seconds: 1.5))
        XCTAssertEqual(calculator.update(wheel(103, 2048 + 1536), receivedAt: 29), .stopped, "a new stop is reported again")
    }

    func testStopsAreReportedBySpeedCadenceCalculator() throws {
        var calculator = try CyclingSpeedCadenceCalculator(
            profile: .cyclingSpeedAndCadence, wheelCircumference: 2, stopTimeout: 2)
        _ = calculator.update(wheel: wheel(1, 0), crank: crank(1, 0), receivedAt: 0)
        _ = calculator.update(wheel: wheel(2, 1024), crank: crank(2, 1024), receivedAt: 1)
        let waiting = calculator.update(wheel: wheel(2, 1024), crank: crank(2, 1024), receivedAt: 2)
        XCTAssertNil(waiting.speed)
        XCTAssertNil(waiting.cadence)
        let stopped = calculator.update(wheel: wheel(2, 1024), crank: crank(2, 1024), receivedAt: 3)
        XCTAssertEqual(stopped.speed, 0)
        XCTAssertEqual(stopped.distance, 0)
        XCTAssertEqual(stopped.cadence, 0)
    }

    func testAStandstillLongerThanHalfTheWrapStartsAgain() {
        // 1/1024 s event times wrap after 64 s: a change after 40 s of standing may hide a wrap.
        var calculator = RevolutionRateCalculator(counter: .crank, stopTimeout: 3)
        _ = calculator.update(crank(10, 1000), receivedAt: 0)
        XCTAssertEqual(calculator.update(crank(10, 1000), receivedAt: 5), .stopped)
        XCTAssertEqual(calculator.update(crank(11, 1500), receivedAt: 40), .discarded(.gapLongerThanEventTimeWrap))
        XCTAssertEqual(calculator.update(crank(12, 2524), receivedAt: 41), .moving(revolutions: 1, seconds: 1))
        // 1/2048 s wraps after 32 s: 16 s is the limit.
        var power = RevolutionRateCalculator(counter: .cyclingPowerWheel)
        _ = power.update(wheel(1, 0, .cyclingPowerWheel), receivedAt: 0)
        XCTAssertEqual(
            power.update(wheel(2, 100, .cyclingPowerWheel), receivedAt: 16), .discarded(.gapLongerThanEventTimeWrap))
        XCTAssertEqual(
            power.update(wheel(3, 2148, .cyclingPowerWheel), receivedAt: 17), .moving(revolutions: 1, seconds: 1))
    }

    func testACounterThatJumpsIsDiscarded() {
        // A sensor that restarts sends its counter back to 0: modulo 2^16 that reads as 65 000
        // revolutions, which is no cadence.
        var calculator = RevolutionRateCalculator(counter: .crank)
        _ = calculator.update(crank(500, 10_000), receivedAt: 0)
        XCTAssertEqual(calculator.update(crank(3, 11_024), receivedAt: 1), .discarded(.implausibleRate))
        XCTAssertEqual(calculator.update(crank(4, 12_048), receivedAt: 2), .moving(revolutions: 1, seconds: 1))
        // A count that changes with the same event time contradicts CSCS (CSC Measurement).
        XCTAssertEqual(calculator.update(crank(6, 12_048), receivedAt: 3), .discarded(.countChangedWithoutEvent))
        XCTAssertEqual(calculator.update(crank(7, 13_072), receivedAt: 4), .moving(revolutions: 1, seconds: 1))
    }

    func testResetForgetsTheBaseline() {
        var calculator = RevolutionRateCalculator(counter: .cscWheel)
        _ = calculator.update(wheel(1, 0), receivedAt: 0)
        calculator.reset()
        XCTAssertEqual(calculator.update(wheel(5, 4096), receivedAt: 4), .baseline)
        XCTAssertEqual(calculator.update(wheel(7, 5120), receivedAt: 5), .moving(revolutions: 2, seconds: 1))
    }

    /// Every starting point of a 16-bit event time and of a 16-bit counter: the delta across
    /// the wrap is the true one.
    func testEveryStartingPointOfTheSixteenBitCounters() {
        var failures: [String] = []
        for start in 0...0xFFFF {
            var calculator = RevolutionRateCalculator(counter: .crank)
            _ = calculator.update(crank(UInt16(start), UInt16(start)), receivedAt: 0)
            let outcome = calculator.update(
                crank(UInt16(truncatingIfNeeded: start + 3), UInt16(truncatingIfNeeded: start + 3072)), receivedAt: 3)
            if outcome != .moving(revolutions: 3, seconds: 3) { failures.append("\(start): \(outcome)") }
        }
        XCTAssertEqual(failures, [])
    }

    func testTheCircumferenceMustBePositive() {
        for bad in [0, -2.1, .nan, .infinity] {
            XCTAssertThrowsError(try CyclingSpeedCadenceCalculator(profile: .cyclingPower, wheelCircumference: bad)) { error in
                XCTAssertTrue("\(error)".contains("wheel circumference"), "\(error)")
            }
        }
    }
}

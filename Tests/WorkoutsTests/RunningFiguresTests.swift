import Foundation
import GatewayTesting
import HealthModel
import Workouts
import WorkoutsTesting
import XCTest

/// The live board's running figures (``RunningFigures`` through ``LiveWorkout/liveFigures(at:profile:)``)
/// give what the full analysis (``LiveWorkout/snapshot(at:profile:)``) gives, at every moment of a
/// workout with gaps, a pause, a late sample and device energy, while reading only new samples.
final class RunningFiguresTests: XCTestCase {
    let s = Script(clock: ManualClock())
    let definition = WorkoutDefinition(
        id: SampleIDGenerator(seed: 1).next(), activityType: .running, firstActivityID: SampleIDGenerator(seed: 2).next())

    func assertSameFigures(_ live: inout LiveWorkout, at seconds: Double, profile: UserProfile, line: UInt = #line) {
        let running = live.liveFigures(at: s.at(seconds), profile: profile)
        let analysed = live.snapshot(at: s.at(seconds), profile: profile)
        XCTAssertEqual(running.state, analysed.state, line: line)
        XCTAssertEqual(running.elapsedSeconds, analysed.elapsedSeconds, accuracy: 1e-9, line: line)
        XCTAssertEqual(running.zoneSeconds.count, analysed.zoneSeconds.count, line: line)
        for (a, b) in zip(running.zoneSeconds, analysed.zoneSeconds) { XCTAssertEqual(a, b, accuracy: 1e-6, "at \(seconds) s", line: line) }
        XCTAssertEqual(running.energyKilocalories ?? -1, analysed.energyKilocalories ?? -1, accuracy: 1e-6, "at \(seconds) s", line: line)
    }

    func testTheRunningFiguresEqualTheFullAnalysisThroughGapsPausesAndLateSamples() throws {
        let profile = scriptedProfile
        var live = LiveWorkout(definition)
        try live.apply(WorkoutJournalEntry(action: .prepare, date: s.at(0)))
        try live.apply(WorkoutJournalEntry(action: .start, date: s.at(0)))
        assertSameFigures(&live, at: 0.5, profile: profile)
        var bpm = 95.0
        for second in 1...40 {
            bpm += 3
            live.collect([s.heartRate(bpm, at: Double(second))])
            assertSameFigures(&live, at: Double(second) + 0.5, profile: profile)
        }
        XCTAssertGreaterThan(live.liveFigures(at: s.at(40), profile: profile).zoneSeconds.filter { $0 > 0 }.count, 2,
                             "the readings crossed zones")
        // A gap longer than the threshold, then readings again.
        assertSameFigures(&live, at: 52, profile: profile)
        for second in 60...70 { live.collect([s.heartRate(150, at: Double(second))]) }
        assertSameFigures(&live, at: 70.2, profile: profile)
        // A pause and a resume between readings.
        try live.apply(WorkoutJournalEntry(action: .pause, date: s.at(71)))
        try live.apply(WorkoutJournalEntry(action: .resume, date: s.at(80)))
        for second in 81...90 { live.collect([s.heartRate(170, at: Double(second))]) }
        assertSameFigures(&live, at: 90.5, profile: profile)
        // A late reading, inserted before others: the figures start over once and still agree.
        live.collect([s.heartRate(110, at: 85.5)])
        assertSameFigures(&live, at: 91, profile: profile)
        for second in 91...95 { live.collect([s.heartRate(120, at: Double(second))]) }
        assertSameFigures(&live, at: 95.5, profile: profile)
    }

    func testWithoutTheEquationTheDevicesEnergyIsSummed() throws {
        let profile = UserProfile(maximumHeartRate: 190)
        var live = LiveWorkout(definition)
        try live.apply(WorkoutJournalEntry(action: .prepare, date: s.at(0)))
        try live.apply(WorkoutJournalEntry(action: .start, date: s.at(0)))
        live.collect([s.energy(2, from: 0, to: 5), s.energy(3, from: 5, to: 10), s.heartRate(120, at: 10)])
        assertSameFigures(&live, at: 11, profile: profile)
        XCTAssertEqual(live.liveFigures(at: s.at(11), profile: profile).energyKilocalories, 5)
    }
}

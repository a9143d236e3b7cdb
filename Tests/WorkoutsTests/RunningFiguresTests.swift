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

/// A workout whose store keeps its samples holds only its recent ones
/// (``LiveWorkout/keepRecentSamples(seconds:profile:)``): its memory stays bounded for an hour,
/// its live figures stay those of every sample, and with the store's samples given back it is
/// the workout that kept everything.
final class RecentSamplesTests: XCTestCase {
    let s = Script(clock: ManualClock())
    let definition = WorkoutDefinition(
        id: SampleIDGenerator(seed: 1).next(), activityType: .running, firstActivityID: SampleIDGenerator(seed: 2).next())

    func testAnHourKeepsAtMostTwiceTheWindowAndTheFiguresOfEverySample() throws {
        let profile = scriptedProfile
        var whole = LiveWorkout(definition)
        var recent = LiveWorkout(definition)
        recent.keepRecentSamples(seconds: 60, profile: profile)
        for entry in [WorkoutJournalEntry(action: .prepare, date: s.at(0)), WorkoutJournalEntry(action: .start, date: s.at(0))] {
            try whole.apply(entry)
            try recent.apply(entry)
        }
        var records: [HealthRecord] = []
        var largest = 0
        for second in 1...3600 {
            // Zones crossed, a 20 s gap every 10 minutes, and device energy now and then.
            guard second % 600 >= 20 else { continue }
            var batch = [s.heartRate(100 + Double((second / 7) % 90), at: Double(second))]
            if second % 300 == 0 { batch.append(s.energy(4, from: Double(second - 300), to: Double(second))) }
            records += batch
            whole.collect(batch)
            recent.collect(batch)
            largest = max(largest, recent.builder.samples.count)
            // The board reads now and then only: the dropped samples count even unread.
            if second % 450 == 0 {
                let a = whole.liveFigures(at: s.at(Double(second) + 0.5), profile: profile)
                let b = recent.liveFigures(at: s.at(Double(second) + 0.5), profile: profile)
                for (x, y) in zip(a.zoneSeconds, b.zoneSeconds) { XCTAssertEqual(x, y, accuracy: 1e-6, "at \(second) s") }
                XCTAssertEqual(a.energyKilocalories ?? -1, b.energyKilocalories ?? -1, accuracy: 1e-6)
            }
        }
        XCTAssertEqual(whole.builder.samples.count, records.count)
        XCTAssertLessThanOrEqual(largest, 2 * 60 + 2, "at most twice the window of one reading a second")
        XCTAssertFalse(recent.hasEverySample)
        XCTAssertGreaterThan(recent.builder.droppedCount, 3000)
        XCTAssertTrue(whole.hasEverySample)
        // Zones were crossed: the comparison above compared something.
        XCTAssertGreaterThan(whole.liveFigures(at: s.at(3600), profile: profile).zoneSeconds.filter { $0 > 60 }.count, 2)

        // A late reading from before the dropped ones is the store's: not collected again.
        XCTAssertEqual(recent.collect([s.heartRate(150, at: 1000.5)]), 0)

        // The store gives every sample back, in no particular order: the same workout.
        try recent.apply(WorkoutJournalEntry(action: .end, date: s.at(3601)))
        try whole.apply(WorkoutJournalEntry(action: .end, date: s.at(3601)))
        recent.collectCommitted(Array(records.reversed()))
        XCTAssertTrue(recent.hasEverySample)
        XCTAssertEqual(recent.builder.samples, whole.builder.samples)
        XCTAssertEqual(recent.workout(profile: profile), whole.workout(profile: profile))
        XCTAssertEqual(recent.snapshot(at: s.at(3601), profile: profile), whole.snapshot(at: s.at(3601), profile: profile))
    }

    /// A workout rebuilt with every sample (a restart's replay of an hour) and then told to keep
    /// only its recent ones drops the others at once, not at its next sample, with the same
    /// live figures; given the store's samples back it is the same workout.
    func testAWholeWorkoutToldToKeepRecentSamplesDropsTheRestAtOnce() throws {
        let profile = scriptedProfile
        var whole = LiveWorkout(definition)
        for entry in [WorkoutJournalEntry(action: .prepare, date: s.at(0)), WorkoutJournalEntry(action: .start, date: s.at(0))] {
            try whole.apply(entry)
        }
        let records = (1...3600).map { second in s.heartRate(100 + Double((second / 7) % 90), at: Double(second)) }
        whole.collect(records)
        var recent = whole
        recent.keepRecentSamples(seconds: 60, profile: profile)
        XCTAssertFalse(recent.hasEverySample)
        XCTAssertLessThanOrEqual(recent.builder.samples.count, 2 * 60 + 1)
        XCTAssertEqual(recent.builder.droppedCount + recent.builder.samples.count, records.count)
        let a = whole.liveFigures(at: s.at(3600.5), profile: profile)
        let b = recent.liveFigures(at: s.at(3600.5), profile: profile)
        for (x, y) in zip(a.zoneSeconds, b.zoneSeconds) { XCTAssertEqual(x, y, accuracy: 1e-6) }
        XCTAssertGreaterThan(a.zoneSeconds.filter { $0 > 60 }.count, 2, "zones were crossed: the comparison compared something")

        try recent.apply(WorkoutJournalEntry(action: .end, date: s.at(3601)))
        try whole.apply(WorkoutJournalEntry(action: .end, date: s.at(3601)))
        recent.collectCommitted(records.shuffled())
        XCTAssertEqual(recent.workout(profile: profile), whole.workout(profile: profile))
    }
}

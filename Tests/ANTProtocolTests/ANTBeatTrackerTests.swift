import ANTProtocol
import XCTest

/// RR intervals only where exact: across beat-time and beat-count rollovers, missed
/// broadcasts, page 4's previous beat time, and a strap that stops toggling.
final class ANTBeatTrackerTests: XCTestCase {
    /// A strap sending four messages a second for a list of RR intervals (1/1024 s), starting at
    /// `time` and `count`: each message repeats the last beat until the next one.
    private struct Strap {
        var time: UInt16
        var count: UInt8
        var previous: UInt16

        /// The beat fields after the next beat, `rr` later.
        mutating func beat(_ rr: UInt16) -> (UInt16, UInt8, UInt16) {
            previous = time
            time &+= rr
            count &+= 1
            return (time, count, previous)
        }
    }

    func testRepeatsAreNotBeatsAndConsecutiveCountsGiveExactIntervals() {
        var tracker = ANTBeatTracker()
        let first = tracker.observe(beatTime: 1000, beatCount: 10)
        XCTAssertEqual(first?.isFirst, true)
        XCTAssertNil(first?.rrInterval, "nothing is known before the first beat")
        XCTAssertNil(tracker.observe(beatTime: 1000, beatCount: 10), "a repeated page")
        XCTAssertNil(tracker.observe(beatTime: 1000, beatCount: 10))
        let second = tracker.observe(beatTime: 1853, beatCount: 11)
        XCTAssertEqual(second?.rrInterval, 853)
        XCTAssertEqual(second?.missedBeats, 0)
        XCTAssertEqual(second?.isFirst, false)
    }

    func testRolloversOfBeatTimeAndCount() {
        var strap = Strap(time: 63_900, count: 250, previous: 0)
        var tracker = ANTBeatTracker()
        XCTAssertEqual(tracker.observe(beatTime: strap.time, beatCount: strap.count)?.isFirst, true)
        var intervals: [UInt16] = []
        let sent: [UInt16] = [800, 812, 790, 805, 799, 820, 801, 795, 810]
        for rr in sent {
            let (time, count, _) = strap.beat(rr)
            // Two messages per beat, the second a repeat.
            if let beat = tracker.observe(beatTime: time, beatCount: count) { intervals.append(beat.rrInterval ?? 0) }
            XCTAssertNil(tracker.observe(beatTime: time, beatCount: count))
        }
        XCTAssertEqual(intervals, sent, "the 16-bit time wrapped after the second beat, the count after the sixth")
        XCTAssertLessThan(strap.time, 63_900)
        XCTAssertLessThan(strap.count, 250)
    }

    func testMissedBroadcastsAreAGapWithoutAnInventedInterval() {
        var strap = Strap(time: 65_000, count: 254, previous: 0)
        var tracker = ANTBeatTracker()
        _ = tracker.observe(beatTime: strap.time, beatCount: strap.count)
        _ = strap.beat(700)
        _ = strap.beat(710)
        let (time, count, _) = strap.beat(720)
        // The two beats in between were never received (count 254 → 1 across the rollover).
        let beat = tracker.observe(beatTime: time, beatCount: count)
        XCTAssertEqual(beat?.missedBeats, 2)
        XCTAssertNil(beat?.rrInterval, "a jump of more than one beat is a gap")
        let (nextTime, nextCount, _) = strap.beat(730)
        XCTAssertEqual(tracker.observe(beatTime: nextTime, beatCount: nextCount)?.rrInterval, 730)
    }

    func testPageFourGivesTheIntervalEvenAcrossAGap() {
        var strap = Strap(time: 100, count: 0, previous: 0)
        var tracker = ANTBeatTracker()
        let (time0, count0, previous0) = strap.beat(900)
        XCTAssertEqual(tracker.observe(beatTime: time0, beatCount: count0, previousBeatTime: previous0)?.rrInterval, 900,
                       "page 4 gives the first beat its interval")
        _ = strap.beat(910)
        _ = strap.beat(920)
        let (time, count, previous) = strap.beat(65_000 &+ 1000)  // an interval across the time rollover
        let beat = tracker.observe(beatTime: time, beatCount: count, previousBeatTime: previous)
        XCTAssertEqual(beat?.missedBeats, 2)
        XCTAssertEqual(beat?.rrInterval, 65_000 &+ 1000)
    }

    func testAStrapThatStopsTogglingStillGivesBeatsFromTheCount() throws {
        // The toggle flips for a while (page 4 trusted), then stays put: page 4's bytes are no
        // longer read, and intervals come from consecutive counts alone.
        var toggles = ANTPageToggleTracker()
        var tracker = ANTBeatTracker()
        var strap = Strap(time: 0, count: 0, previous: 0)
        var intervals: [UInt16?] = []
        var messageIndex = 0
        let sent: [UInt16] = Array(repeating: 1024, count: 10) + [1000, 1010]
        for (index, rr) in sent.enumerated() {
            let (time, count, previous) = strap.beat(rr)
            // Four messages per beat; the toggle flips every four messages for the first six
            // beats, then never again.
            for repeatIndex in 0..<4 {
                let toggle = index < 6 ? (messageIndex / 4) % 2 == 1 : true
                messageIndex += 1
                let trusted = toggles.observe(toggle: toggle)
                let head: UInt8 = (toggle ? 0x80 : 0) | (repeatIndex == 3 ? 4 : 0)
                let page = try ANTHeartRatePage(
                    bytes: [head, 0xFF, UInt8(previous & 0xFF), UInt8(previous >> 8), UInt8(time & 0xFF), UInt8(time >> 8), count, 60],
                    pageSpecificTrusted: trusted)
                if let beat = tracker.observe(beatTime: page.beatTime, beatCount: page.beatCount, previousBeatTime: page.previousBeatTime) {
                    intervals.append(beat.rrInterval)
                }
            }
        }
        XCTAssertFalse(toggles.isTrusted)
        XCTAssertEqual(intervals.count, sent.count, "every beat once")
        XCTAssertNil(intervals[0])
        XCTAssertEqual(intervals.dropFirst().map { $0 ?? 0 }, Array(sent.dropFirst()))
    }

    func testAResetMakesTheNextBeatAFirstOne() {
        var tracker = ANTBeatTracker()
        _ = tracker.observe(beatTime: 10, beatCount: 1)
        tracker.reset()
        let beat = tracker.observe(beatTime: 2000, beatCount: 2)
        XCTAssertEqual(beat?.isFirst, true)
        XCTAssertNil(beat?.rrInterval)
    }

    func testAPageRepeatingTheLastBeatAfterAResetIsNotANewBeat() {
        // A receiver that could not read for the loss timeout, then reads the pages it kept:
        // the beat it recorded last is still on the air until the next one.
        var tracker = ANTBeatTracker()
        _ = tracker.observe(beatTime: 1000, beatCount: 7)
        tracker.reset()
        XCTAssertNil(tracker.observe(beatTime: 1000, beatCount: 7))
        tracker.reset()  // lost again before any new beat: the same beat is still the one seen
        XCTAssertNil(tracker.observe(beatTime: 1000, beatCount: 7))
        let next = tracker.observe(beatTime: 1900, beatCount: 8)
        XCTAssertEqual(next?.isFirst, true, "no interval is inferred across the loss")
        XCTAssertNil(next?.rrInterval)
        XCTAssertNil(tracker.observe(beatTime: 1900, beatCount: 8))
        XCTAssertEqual(tracker.observe(beatTime: 2800, beatCount: 9)?.rrInterval, 900)
    }

    /// After a restart the stored beat is recognised, not counted from: a page one count above it
    /// gives a first beat, its interval only from a trusted page 4.
    func testAfterARestartTheStoredBeatIsNotNewAndNoIntervalIsCountedFromIt() {
        var tracker = ANTBeatTracker(storedBeatTime: 4000, storedBeatCount: 17)
        XCTAssertNil(tracker.observe(beatTime: 4000, beatCount: 17), "the stored beat repeated")
        let first = tracker.observe(beatTime: 4900, beatCount: 18)
        XCTAssertEqual(first?.isFirst, true)
        XCTAssertNil(first?.rrInterval, "count 18 after the stored 17 is not proof the series placed beat 17")
        XCTAssertEqual(tracker.observe(beatTime: 5800, beatCount: 19)?.rrInterval, 900, "consecutive in this run")
        var withPageFour = ANTBeatTracker(storedBeatTime: 4000, storedBeatCount: 17)
        XCTAssertEqual(withPageFour.observe(beatTime: 4900, beatCount: 18, previousBeatTime: 4000)?.rrInterval, 900)
    }
}

import LineScaleKit
import XCTest

final class CheckpointPacerTests: XCTestCase {
    private let start = ContinuousClock.now

    func testOnlyWhenTheOffsetAdvanced() {
        var pacer = CheckpointPacer(offset: 100)
        XCTAssertFalse(pacer.isPending(consumed: 100))
        XCTAssertNil(pacer.checkpoint(consumed: 100, at: start), "the resumed offset needs no checkpoint")
        XCTAssertTrue(pacer.isPending(consumed: 140))
        XCTAssertEqual(pacer.checkpoint(consumed: 140, at: start), 140, "the first one of a run is sent at once")
        XCTAssertNil(pacer.checkpoint(consumed: 140, at: start + .seconds(5)))
    }

    func testAtMostOncePerInterval() {
        var pacer = CheckpointPacer(offset: 0, interval: .milliseconds(500))
        XCTAssertEqual(pacer.checkpoint(consumed: 10, at: start), 10)
        XCTAssertNil(pacer.checkpoint(consumed: 20, at: start + .milliseconds(100)))
        XCTAssertNil(pacer.checkpoint(consumed: 30, at: start + .milliseconds(499)))
        XCTAssertTrue(pacer.isPending(consumed: 30))
        XCTAssertEqual(pacer.checkpoint(consumed: 30, at: start + .milliseconds(500)), 30)
        XCTAssertEqual(pacer.sent, 30)
        XCTAssertFalse(pacer.isPending(consumed: 30))
    }

    func testReset() {
        var pacer = CheckpointPacer(offset: 300)
        XCTAssertEqual(pacer.checkpoint(consumed: 400, at: start), 400)
        pacer.reset(offset: 0)
        XCTAssertEqual(pacer.sent, 0)
        XCTAssertEqual(pacer.checkpoint(consumed: 50, at: start + .seconds(1)), 50)
    }
}

import Foundation
@testable import WebBoard
import XCTest

/// The broadcast behind the event streams: a new reader gets the whole board, a reader that
/// keeps up gets every change in order, one too far behind gets the whole board (its skipped
/// changes counted), an idle wait ends at its timeout, and closing wakes every reader.
final class EventBroadcastTests: XCTestCase {
    func testANewReaderGetsTheWholeBoardThenTheChangesInOrder() {
        let broadcast = EventBroadcast()
        broadcast.publish(whole: { [1] }, change: [10])
        XCTAssertEqual(broadcast.next(after: 0, timeout: 5), .update(1, [[1]]), "a new reader: the whole board")
        broadcast.publish(whole: { [2] }, change: [20])
        broadcast.publish(whole: { [3] }, change: [30])
        XCTAssertEqual(broadcast.next(after: 1, timeout: 5), .update(3, [[20], [30]]), "both changes, in order")
        XCTAssertEqual(broadcast.skipped, 0)
        XCTAssertEqual(broadcast.next(after: 3, timeout: 0.01), .idle, "nothing newer: the wait ends at its timeout")
    }

    func testAReaderTooFarBehindGetsTheWholeBoardAndTheSkippedChangesAreCounted() {
        let broadcast = EventBroadcast()
        broadcast.publish(whole: { [0] }, change: [0])
        let total = EventBroadcast.changesKept + 5
        for index in 1...total { broadcast.publish(whole: { [UInt8(index)] }, change: [UInt8(100)]) }
        XCTAssertEqual(broadcast.next(after: 1, timeout: 5), .update(UInt64(total + 1), [[UInt8(total)]]))
        XCTAssertEqual(broadcast.skipped, total)
    }

    func testClosingWakesAWaitingReader() {
        let broadcast = EventBroadcast()
        let woke = expectation(description: "the reader returns")
        Thread.detachNewThread {
            XCTAssertEqual(broadcast.next(after: 0, timeout: 60), .closed)
            woke.fulfill()
        }
        broadcast.close()
        wait(for: [woke], timeout: 30)
        XCTAssertEqual(broadcast.next(after: 0, timeout: 60), .closed, "and every later one at once")
    }

    func testTheTokenComparisonNeedsTheWholeToken() {
        XCTAssertTrue(BoardServer.constantTimeEqual("s3cret-token-0123456789", "s3cret-token-0123456789"))
        XCTAssertFalse(BoardServer.constantTimeEqual("s3cret-token-0123456789", "s3cret-token-012345678"))
        XCTAssertFalse(BoardServer.constantTimeEqual("s3cret-token-0123456789", "s3cret-token-0123456780"))
        XCTAssertFalse(BoardServer.constantTimeEqual("", "s3cret-token-0123456789"))
    }
}

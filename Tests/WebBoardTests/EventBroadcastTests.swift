import Foundation
@testable import WebBoard
import XCTest

/// The single-slot broadcast behind the event streams: readers get the newest update, a slow
/// reader skips (counted), an idle wait ends at its timeout, and closing wakes every reader.
final class EventBroadcastTests: XCTestCase {
    func testReadersGetTheNewestUpdateAndSkippedOnesAreCounted() {
        let broadcast = EventBroadcast()
        broadcast.publish([1])
        XCTAssertEqual(broadcast.next(after: 0, timeout: 5), .update(1, [1]))
        broadcast.publish([2])
        broadcast.publish([3])
        XCTAssertEqual(broadcast.next(after: 1, timeout: 5), .update(3, [3]), "the newest, not the one in between")
        XCTAssertEqual(broadcast.skipped, 1)
        XCTAssertEqual(broadcast.next(after: 3, timeout: 0.01), .idle, "nothing newer: the wait ends at its timeout")
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

import Foundation
@testable import SerialPedometer
import XCTest

/// The garbage-warning rate limit: first of each kind at once, then one per interval per kind,
/// with the count held back in between.
final class WarningLimiterTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func testTheFirstOfEachKindIsLoggedThenOnePerIntervalWithTheCountHeldBack() {
        var limiter = WarningLimiter<String>(interval: 10)
        XCTAssertEqual(limiter.admit("checksum", at: t0).log, true)
        for second in 1...5 {
            XCTAssertEqual(limiter.admit("checksum", at: t0.addingTimeInterval(Double(second))).log, false)
        }
        // Another kind is not held back by the first.
        XCTAssertEqual(limiter.admit("noise", at: t0.addingTimeInterval(2)).log, true)
        let later = limiter.admit("checksum", at: t0.addingTimeInterval(10))
        XCTAssertEqual(later.log, true)
        XCTAssertEqual(later.heldBack, 5)
        XCTAssertEqual(limiter.suppressedTotal, 5)
        // A clock that stepped back does not silence a kind for good.
        XCTAssertEqual(limiter.admit("checksum", at: t0.addingTimeInterval(-100)).log, true)
    }
}

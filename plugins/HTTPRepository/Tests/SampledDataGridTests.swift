import Foundation
@testable import HTTPRepository
import XCTest

/// Where a series' quantities land in FHIR's SampledData grid.
final class SampledDataGridTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func grid(_ offsets: [Double]) -> SampledDataGrid {
        SampledDataGrid(starts: offsets.map { start.addingTimeInterval($0) }, from: start)
    }

    func testARegularSeriesLandsOnItsOwnTimes() {
        let regular = grid((0..<60).map(Double.init))
        XCTAssertEqual(regular.periodMicroseconds, 1_000_000)
        XCTAssertEqual(regular.points, Array(0..<60))
        let quarter = grid((0..<8).map { Double($0) * 0.25 })
        XCTAssertEqual(quarter.periodMilliseconds, 250)
        XCTAssertEqual(quarter.points, Array(0..<8))
    }

    /// Jitter of a few tens of milliseconds moves no quantity off its second, and a reading that
    /// never came is an `E`.
    func testJitterKeepsEachQuantityOnItsPointAndAMissingReadingIsE() {
        let jittery = grid([0, 1.03, 1.98, 3.01, 5.02, 5.97, 7.0])
        XCTAssertEqual(jittery.points, [0, 1, 2, 3, 5, 6, 7])
        XCTAssertEqual(Double(jittery.periodMicroseconds), 1_000_000, accuracy: 10_000)
        XCTAssertEqual(jittery.data([70, 71, 72, 73, 75, 76, 77]), "70 71 72 73 E 75 76 77")
    }

    /// A median a little off the device's rate (here 1.01 s against 1 s: two steps of three are
    /// 10 ms late, the third 20 ms early) would move the points half a second off their
    /// quantities by the minute's end; the least-squares refinement takes the rate itself.
    func testAMedianOffTheRateDoesNotPileUpAlongTheSeries() {
        let offsets = (0..<60).map { index in Double(index) + 0.01 * Double(index % 3) }
        let drifting = grid(offsets)
        XCTAssertEqual(Double(drifting.periodMicroseconds), 1_000_000, accuracy: 1_000)
        XCTAssertEqual(drifting.points, Array(0..<60))
        let values = (0..<60).map { Double(60 + $0 % 40) }
        let data = drifting.data(values).split(separator: " ")
        XCTAssertEqual(data.count, 60)
        XCTAssertFalse(data.contains("E"))
    }

    /// Quantities closer than the period each keep a point of their own, in order; a burst does
    /// not make a grid of thousands of points.
    func testCloseQuantitiesAreNeverLostAndTheGridStaysSmall() {
        let burst = grid([0, 0.001, 0.002, 30, 30.001, 60])
        XCTAssertEqual(burst.points.count, 6)
        XCTAssertEqual(Set(burst.points).count, 6)
        XCTAssertEqual(burst.points, burst.points.sorted())
        XCTAssertLessThanOrEqual((burst.points.last ?? 0) + 1, 4 * 6 + 1)
        let single = grid([0])
        XCTAssertEqual(single.periodMilliseconds, 1000)
        XCTAssertEqual(single.data([72]), "72")
    }

    func testDecimalsAreFHIRDecimals() {
        XCTAssertEqual(SampledDataGrid.decimal(72), "72")
        XCTAssertEqual(SampledDataGrid.decimal(-3), "-3")
        XCTAssertEqual(SampledDataGrid.decimal(2.9), "2.9")
        XCTAssertEqual(SampledDataGrid.decimal(99.08535400002974), "99.08535400002974")
        let pattern = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
        for value in [0.1, 1e-7, 1.5e20, 123_456.789, -0.0, 1e15] {
            XCTAssertNotNil(SampledDataGrid.decimal(value).wholeMatch(of: pattern), SampledDataGrid.decimal(value))
        }
    }
}

import Foundation
import GatewayRuntime
import HealthModel
import HealthStore
import RemoteSinkKit
import XCTest

/// The one rule of how a remote sink carries a quantity series (`quantitySeries`).
final class QuantitySeriesFormTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let id = SampleID(high: 0x0190_0000_0000_7000, low: 0x8000_0000_0000_0042)

    func series(provisional: Bool) throws -> QuantitySeriesSample {
        var metadata: Metadata = [.syncIdentifier: .string("quantity-series:x"), .syncVersion: .integer(4)]
        if provisional { metadata[.provisional] = .bool(true) }
        return try QuantitySeriesSample(
            id: id, type: .heartRate, unit: .countPerMinute,
            quantities: (0..<3).map { index in
                let date = start.addingTimeInterval(Double(index))
                return SeriesQuantity(value: Double(70 + index), start: date, end: date)
            },
            metadata: metadata)
    }

    func testSeriesCarriesEveryVersionAsItIs() throws {
        let open = HealthRecord.quantitySeries(try series(provisional: true))
        XCTAssertTrue(QuantitySeriesForm.series.admits(.stored(open, anchor: 1)))
        XCTAssertEqual(QuantitySeriesForm.series.records(open), [open])
        XCTAssertEqual(QuantitySeriesForm.series.identity, " quantitySeries=series")
    }

    func testExpandCarriesAClosedSeriesAsItsQuantitiesAndPassesAnOpenOneOver() throws {
        let open = try series(provisional: true)
        let closed = try series(provisional: false)
        XCTAssertFalse(QuantitySeriesForm.expand.admits(.stored(.quantitySeries(open), anchor: 1)))
        XCTAssertTrue(QuantitySeriesForm.expand.admits(.stored(.quantitySeries(closed), anchor: 2)))
        let deletion = StoreChanges.Deletion(id: id, kind: .quantitySeries, type: "heartRate", anchor: 3)
        XCTAssertTrue(QuantitySeriesForm.expand.admits(.deleted(deletion)), "a deletion of an open series still travels")
        let records = QuantitySeriesForm.expand.records(.quantitySeries(closed))
        XCTAssertEqual(records.map(\.id), (0..<3).map { SampleID(quantity: $0, ofSeries: id) })
        XCTAssertEqual(records, closed.quantitySamples.map(HealthRecord.quantity))
        // Anything else travels as it is.
        let sample = HealthRecord.quantity(closed.quantitySample(at: 0))
        XCTAssertEqual(QuantitySeriesForm.expand.records(sample), [sample])
        XCTAssertTrue(QuantitySeriesForm.expand.admits(.stored(sample, anchor: 4)))
        XCTAssertEqual(QuantitySeriesForm.expand.identity, "", "expand keeps the identity of the releases before series")
    }

    func testTheKeyIsDeclaredOnceWithItsChoices() {
        guard case .string(let values?, _, _, _) = QuantitySeriesForm.configurationShape else {
            return XCTFail("\(QuantitySeriesForm.configurationShape)")
        }
        XCTAssertEqual(values, ["series", "expand"])
    }
}

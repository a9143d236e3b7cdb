import Foundation
import HealthModel
import XCTest

/// The one implementation of attribution (issue 77), as the store's writer runs it on each
/// batch it commits.
final class ReadingAttributionTests: XCTestCase {
    let scale = Device(name: "MIBFS", localIdentifier: "C8:47:8C:01:02:03")
    let strap = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "A0:9E:1A:00:00:01")
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func sample(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, device: Device, at date: Date, metadata: Metadata = [:]) throws
        -> HealthRecord
    {
        .quantity(try QuantitySample(
            id: SampleID(UUID()), type: type, quantity: Quantity(value, unit), start: date, end: date, device: device, metadata: metadata))
    }

    /// A weighing decides first, its moment's other readings follow it (in its batch or a later
    /// one), and it becomes its person's reference weight: the next weighing near it is theirs.
    func testAWeighingLeadsItsMomentAndMovesTheReference() throws {
        let rules = PersonAttribution(shared: [
            ("Ana", [SharedDeviceUse(device: "C8:47:8C:01:02:03")]), ("Ben", [SharedDeviceUse(device: "C8:47:8C:01:02:03")]),
        ])
        var attribution = ReadingAttribution(rules: rules, referenceWeights: ["Ana": 60, "Ben": 80])
        var counts = AttributionCounts()
        // The body fat comes first in the batch, the weighing after it.
        let first = attribution.attribute([
            try sample(.bodyFatPercentage, 24, .percent, device: scale, at: start),
            try sample(.bodyMass, 61.5, .kilogram, device: scale, at: start),
            try sample(.bodyFatPercentage, 30, .percent, device: scale, at: start + 60),
        ], counts: &counts)
        XCTAssertEqual(first.map { $0.person }, ["Ana", "Ana", nil])
        XCTAssertEqual(attribution.referenceWeights["Ana"], 61.5)
        // The lean mass of the same weighing, in the next batch, follows it too.
        let later = attribution.attribute([try sample(.leanBodyMass, 46, .kilogram, device: scale, at: start)], counts: &counts)
        XCTAssertEqual(later.map { $0.person }, ["Ana"])
        // 63.4 is within 2 kg of 61.5 (Ana's new reference), not of 60.
        let second = attribution.attribute([try sample(.bodyMass, 63.4, .kilogram, device: scale, at: start + 120)], counts: &counts)
        XCTAssertEqual(second.map { $0.person }, ["Ana"])
        XCTAssertEqual(counts.attributed, 4)
        XCTAssertEqual(counts.unattributed, ["sharedDevice": 1])

        // A weighing its source named moves its person's reference too.
        let named = try sample(.bodyMass, 66, .kilogram, device: scale, at: start + 180, metadata: [.person: .string("Ana")])
        XCTAssertEqual(attribution.attribute([named], counts: &counts).map { $0.person }, ["Ana"])
        XCTAssertEqual(attribution.referenceWeights["Ana"], 66)
        // What a source that must know the person asks: the same rule and references.
        XCTAssertEqual(attribution.weighing(on: scale, at: start + 240, kilograms: 79), .person("Ben"))
        XCTAssertEqual(attribution.referenceWeights["Ben"], 79)
    }

    /// A batch of one device's readings is decided once for the device when its person does not
    /// depend on the reading, and reading by reading when it does: a handover inside the batch
    /// splits it at its instant; an owned strap's readings are all its owner's; a user index
    /// decides a cuff's reading.
    func testOneBatchAcrossAHandoverAndAnOwnedStrap() throws {
        let owned = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")
        let rules = PersonAttribution(
            owners: [("Eve", ["C0:FF:EE:00:00:03"])],
            history: [WearInterval(device: "A0:9E:1A:00:00:01", person: "Ana", start: start, end: start + 30),
                      WearInterval(device: "A0:9E:1A:00:00:01", person: "Ben", start: start + 30)])
        var attribution = ReadingAttribution(rules: rules)
        var counts = AttributionCounts()
        let batch = try (0..<60).flatMap { second in
            [try sample(.heartRate, 100, .countPerMinute, device: strap, at: start + Double(second)),
             try sample(.heartRate, 90, .countPerMinute, device: owned, at: start + Double(second))]
        }
        let people = attribution.attribute(batch, counts: &counts).map { $0.person }
        XCTAssertEqual(people.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element),
                       Array(repeating: "Ana", count: 30) + Array(repeating: "Ben", count: 30))
        XCTAssertEqual(Set(people.enumerated().filter { !$0.offset.isMultiple(of: 2) }.map(\.element)), ["Eve"])
        XCTAssertEqual(counts.attributed, 120)

        let cuff = Device(name: "Cuff", localIdentifier: "28:FF:B2:00:00:01")
        var family = ReadingAttribution(rules: PersonAttribution(
            shared: [("Ana", [SharedDeviceUse(device: "28:FF:B2:00:00:01", userIndex: 1)]),
                     ("Ben", [SharedDeviceUse(device: "28:FF:B2:00:00:01", userIndex: 2)])]))
        let pressures = family.attribute([
            try sample(.heartRate, 70, .countPerMinute, device: cuff, at: start),
            try sample(.heartRate, 71, .countPerMinute, device: cuff, at: start + 1, metadata: [.userIndex: .integer(2)]),
            try sample(.heartRate, 72, .countPerMinute, device: cuff, at: start + 2, metadata: [.userIndex: .integer(1)]),
        ], counts: &counts)
        XCTAssertEqual(pressures.map { $0.person }, [nil, "Ben", "Ana"])
    }

    /// An erased person's readings dated before their erase are dropped, whether the rules give
    /// them or their source named them, and so is their workout begun before it; a reading
    /// after the erase stays, and another person's are untouched.
    func testAnErasedPersonsReadingsBeforeTheEraseAreDropped() throws {
        let erase = start + 100
        var attribution = ReadingAttribution(
            rules: PersonAttribution(
                owners: [("Ben", ["C0:FF:EE:00:00:03"])],
                history: [WearInterval(device: "A0:9E:1A:00:00:01", person: "Ana", start: start, end: erase)]),
            erasedAt: ["Ana": erase])
        var counts = AttributionCounts()
        let workout = Workout(
            id: SampleID(UUID()), activityType: .cycling, startDate: start + 10, endDate: start + 90, duration: 80,
            metadata: [.participant: .string("Ana")])
        let kept = attribution.attribute([
            try sample(.heartRate, 100, .countPerMinute, device: strap, at: start + 50),
            try sample(.heartRate, 101, .countPerMinute, device: strap, at: start + 60, metadata: [.person: .string("Ana")]),
            .workout(workout),
            try sample(.heartRate, 102, .countPerMinute, device: strap, at: erase + 1),
            try sample(.heartRate, 90, .countPerMinute, device: Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03"), at: start + 50),
        ], counts: &counts)
        XCTAssertEqual(kept.map { $0.person }, [nil, "Ben"])
        XCTAssertEqual(counts.erased, 3)
        XCTAssertTrue(attribution.isErased("Ana", at: start))
        XCTAssertFalse(attribution.isErased("Ana", at: erase))
    }
}

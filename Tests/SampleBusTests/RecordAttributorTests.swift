import Foundation
import HealthModel
import SampleBus
import Synchronization
import XCTest

/// The bus gives each reading its person before any sink sees it.
final class RecordAttributorTests: XCTestCase {
    let scale = Device(name: "MIBFS", localIdentifier: "C8:47:8C:01:02:03")
    let strap = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "A0:9E:1A:00:00:01")
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func sample(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, device: Device, at date: Date, metadata: Metadata = [:]) throws
        -> HealthRecord
    {
        .quantity(try QuantitySample(
            id: SampleID(UUID()), type: type, quantity: Quantity(value, unit), start: date, end: date, device: device, metadata: metadata))
    }

    /// A weighing decides first, its moment's other readings follow it, and it becomes its
    /// person's reference weight: the next weighing near it is theirs too.
    func testAWeighingLeadsItsMomentAndMovesTheReference() throws {
        let rules = PersonAttribution(shared: [
            ("Ana", [SharedDeviceUse(device: "C8:47:8C:01:02:03")]), ("Ben", [SharedDeviceUse(device: "C8:47:8C:01:02:03")]),
        ])
        let attributor = RecordAttributor(rules: { rules }, referenceWeights: ["Ana": 60, "Ben": 80])
        // The body fat comes first in the batch, the weighing after it.
        let first = attributor.attribute([
            try sample(.bodyFatPercentage, 24, .percent, device: scale, at: start),
            try sample(.bodyMass, 61.5, .kilogram, device: scale, at: start),
            try sample(.bodyFatPercentage, 30, .percent, device: scale, at: start + 60),
        ])
        XCTAssertEqual(first.map { $0.person }, ["Ana", "Ana", nil])
        XCTAssertEqual(attributor.referenceWeights["Ana"], 61.5)
        // 63.4 is within 2 kg of 61.5 (Ana's new reference), not of 60.
        let second = attributor.attribute([try sample(.bodyMass, 63.4, .kilogram, device: scale, at: start + 120)])
        XCTAssertEqual(second.map { $0.person }, ["Ana"])
        let counts = attributor.counts
        XCTAssertEqual(counts.attributed, 3)
        XCTAssertEqual(counts.unattributed, ["sharedDevice": 1])

        // A weighing its source named (a Mi scale) moves its person's reference too.
        let named = try sample(.bodyMass, 66, .kilogram, device: scale, at: start + 180, metadata: [.person: .string("Ana")])
        XCTAssertEqual(attributor.attribute([named]).map { $0.person }, ["Ana"])
        XCTAssertEqual(attributor.referenceWeights["Ana"], 66)
    }

    /// The rules are read for every batch: an assignment made between two batches counts from
    /// the next one, and a reading that names its person keeps it.
    func testTheRulesOfTheMomentAndAGivenPerson() throws {
        let history = Intervals()
        let attributor = RecordAttributor(rules: { PersonAttribution(history: history.all.withLock { $0 }) })
        XCTAssertEqual(attributor.attribute([try sample(.heartRate, 120, .countPerMinute, device: strap, at: start)]).map { $0.person }, [nil])
        history.all.withLock { $0 = [WearInterval(device: "A0:9E:1A:00:00:01", person: "Cai", start: start)] }
        XCTAssertEqual(attributor.attribute([try sample(.heartRate, 121, .countPerMinute, device: strap, at: start + 1)]).map { $0.person }, ["Cai"])
        let imported = try sample(.heartRate, 122, .countPerMinute, device: strap, at: start + 2, metadata: [.person: .string("Dan")])
        XCTAssertEqual(attributor.attribute([imported]).map { $0.person }, ["Dan"])
        XCTAssertEqual(attributor.counts.unattributed, ["nobody": 1])
        XCTAssertEqual(attributor.counts.attributed, 2, "the one it attributed and the one its source named")
    }

    /// A batch of one device's readings is decided once for the device when its person does not
    /// depend on the reading, and reading by reading when it does: a handover inside the batch
    /// splits it, an owned strap's readings are all its owner's, in one stamp the writer meets
    /// again (shared storage).
    func testOneBatchAcrossAHandoverAndAnOwnedStrap() throws {
        let owned = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")
        let rules = PersonAttribution(
            owners: [("Eve", ["C0:FF:EE:00:00:03"])],
            history: [WearInterval(device: "A0:9E:1A:00:00:01", person: "Ana", start: start, end: start + 30),
                      WearInterval(device: "A0:9E:1A:00:00:01", person: "Ben", start: start + 30)])
        let attributor = RecordAttributor(rules: { rules })
        let batch = try (0..<60).flatMap { second in
            [try sample(.heartRate, 100, .countPerMinute, device: strap, at: start + Double(second)),
             try sample(.heartRate, 90, .countPerMinute, device: owned, at: start + Double(second))]
        }
        let people = attributor.attribute(batch).map { $0.person }
        XCTAssertEqual(people.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element),
                       Array(repeating: "Ana", count: 30) + Array(repeating: "Ben", count: 30))
        XCTAssertEqual(Set(people.enumerated().filter { !$0.offset.isMultiple(of: 2) }.map(\.element)), ["Eve"])
        XCTAssertFalse(rules.dependsOnTime(owned))
        XCTAssertTrue(rules.dependsOnTime(strap))
        XCTAssertEqual(attributor.counts.attributed, 120)

        // A device's run decided once never decides a reading that carries a user index.
        let cuff = Device(name: "Cuff", localIdentifier: "28:FF:B2:00:00:01")
        let family = PersonAttribution(
            shared: [("Ana", [SharedDeviceUse(device: "28:FF:B2:00:00:01", userIndex: 1)]),
                     ("Ben", [SharedDeviceUse(device: "28:FF:B2:00:00:01", userIndex: 2)])])
        let pressures = RecordAttributor(rules: { family }).attribute([
            try sample(.heartRate, 70, .countPerMinute, device: cuff, at: start),
            try sample(.heartRate, 71, .countPerMinute, device: cuff, at: start + 1, metadata: [.userIndex: .integer(2)]),
            try sample(.heartRate, 72, .countPerMinute, device: cuff, at: start + 2, metadata: [.userIndex: .integer(1)]),
        ])
        XCTAssertEqual(pressures.map { $0.person }, [nil, "Ben", "Ana"])
    }
}

/// The intervals a test changes between batches.
private final class Intervals: Sendable {
    let all = Mutex<[WearInterval]>([])
}

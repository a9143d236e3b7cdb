import Foundation
import HealthModel
import XCTest

/// Whose reading it is: the rules one at a time, each with the case it must refuse.
final class PersonAttributionTests: XCTestCase {
    let strap = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "A0:9E:1A:00:00:01")
    let scale = Device(name: "MIBFS", localIdentifier: "C8:47:8C:01:02:03")
    let cuff = Device(name: "BLESmart_0000", manufacturer: "OMRON", localIdentifier: "28:FF:B2:00:00:01")
    let ten = Date(timeIntervalSince1970: 1_800_000_000)

    /// A strap handed over at 10:00 gives the readings after 10:00 to its new wearer, the
    /// readings before to the old one, and those after the class's end back to its owner.
    func testAHandoverSplitsTheReadingsAtItsTime() {
        let rules = PersonAttribution(
            owners: [("Ana", ["A0:9E:1A:00:00:01"])],
            history: [
                WearInterval(device: "a0-9e-1a-00-00-01", person: "Ben", start: ten, end: ten + 3600),
                WearInterval(device: "A0:9E:1A:00:00:01", person: "Cai", start: ten + 1800, end: ten + 3600),
            ])
        XCTAssertEqual(rules.attribute(device: strap, at: ten - 1), .person("Ana"))
        XCTAssertEqual(rules.attribute(device: strap, at: ten), .person("Ben"))
        XCTAssertEqual(rules.attribute(device: strap, at: ten + 1799), .person("Ben"))
        // The later assignment holds while both do.
        XCTAssertEqual(rules.attribute(device: strap, at: ten + 1800), .person("Cai"))
        XCTAssertEqual(rules.attribute(device: strap, at: ten + 3600), .person("Ana"))
        // By another of the strap's identities: its name.
        let byName = PersonAttribution(history: [WearInterval(device: "Polar H10 1A2B3C4D", person: "Dan", start: ten)])
        XCTAssertEqual(byName.attribute(device: strap, at: ten + 5), .person("Dan"))
        XCTAssertEqual(byName.attribute(device: strap, at: ten - 5), .unattributed(.nobody))
    }

    /// The intervals are all the rules need: the same intervals give the same answers, whatever
    /// order they come in (a restart reads them back from the store).
    func testTheSameIntervalsGiveTheSameAnswersInAnyOrder() {
        let intervals = [
            WearInterval(device: "A0:9E:1A:00:00:01", person: "Ben", start: ten, end: ten + 60),
            WearInterval(device: "A0:9E:1A:00:00:01", person: "Cai", start: ten + 60),
        ]
        let one = PersonAttribution(history: intervals), other = PersonAttribution(history: intervals.reversed())
        for offset in stride(from: -30.0, through: 120, by: 15) {
            XCTAssertEqual(one.attribute(device: strap, at: ten + offset), other.attribute(device: strap, at: ten + offset))
        }
        XCTAssertEqual(one.attribute(device: strap, at: ten + 90), .person("Cai"))
    }

    /// A cuff with user buttons: the user index decides; an index nobody lists is nobody's,
    /// never the device's other user.
    func testTheUserIndexDecides() {
        let rules = PersonAttribution(shared: [
            ("Ana", [SharedDeviceUse(device: "28:FF:B2:00:00:01", userIndex: 1)]),
            ("Ben", [SharedDeviceUse(device: "28:FF:B2:00:00:01", userIndex: 2)]),
        ])
        XCTAssertEqual(rules.attribute(device: cuff, at: ten, userIndex: 1), .person("Ana"))
        XCTAssertEqual(rules.attribute(device: cuff, at: ten, userIndex: 2), .person("Ben"))
        XCTAssertEqual(rules.attribute(device: cuff, at: ten, userIndex: 3), .unattributed(.unknownUserIndex))
        // No index at all: two users, not a weighing.
        XCTAssertEqual(rules.attribute(device: cuff, at: ten), .unattributed(.sharedDevice))
        // An index from a device nobody lists indexes for is left to the other rules.
        let owned = PersonAttribution(owners: [("Cai", ["28:FF:B2:00:00:01"])])
        XCTAssertEqual(owned.attribute(device: cuff, at: ten, userIndex: 4), .person("Cai"))
    }

    /// A shared scale without user indexes: the one person whose reference weight is within
    /// 2 kg; two people 0.4 kg apart are ambiguous, a weighing far from everyone is nobody's.
    func testASharedScaleByTheOneReferenceWeightNearEnough() {
        let rules = PersonAttribution(shared: [
            ("Ana", [SharedDeviceUse(device: "C8:47:8C:01:02:03")]), ("Ben", [SharedDeviceUse(device: "C8:47:8C:01:02:03")]),
            ("Cai", [SharedDeviceUse(device: "C8:47:8C:01:02:03")]),
        ])
        let weights = ["Ana": 61.0, "Ben": 80.0, "Cai": 80.4]
        XCTAssertEqual(rules.attribute(device: scale, at: ten, weightKilograms: 62.5, referenceWeights: weights), .person("Ana"))
        XCTAssertEqual(rules.attribute(device: scale, at: ten, weightKilograms: 59.0, referenceWeights: weights), .person("Ana"))
        XCTAssertEqual(
            rules.attribute(device: scale, at: ten, weightKilograms: 58.9, referenceWeights: weights), .unattributed(.weightFitsNobody))
        XCTAssertEqual(
            rules.attribute(device: scale, at: ten, weightKilograms: 80.2, referenceWeights: weights), .unattributed(.ambiguousWeight))
        XCTAssertEqual(
            rules.attribute(device: scale, at: ten, weightKilograms: 78.5, referenceWeights: weights), .unattributed(.ambiguousWeight))
        // 78.2 is 1.8 kg from Ben and 2.2 kg from Cai: Ben's alone.
        XCTAssertEqual(rules.attribute(device: scale, at: ten, weightKilograms: 78.2, referenceWeights: weights), .person("Ben"))
        XCTAssertEqual(PersonAttribution.defaultWeightToleranceKilograms, 2)
        // Nobody has a reference weight: nobody.
        XCTAssertEqual(rules.attribute(device: scale, at: ten, weightKilograms: 70), .unattributed(.weightFitsNobody))
        // A shared device with one user is theirs, weighing or not.
        let alone = PersonAttribution(shared: [("Ana", [SharedDeviceUse(device: "MIBFS")])])
        XCTAssertEqual(alone.attribute(device: scale, at: ten, weightKilograms: 120), .person("Ana"))
    }

    /// A reading of no device, or of a device nobody knows, is nobody's.
    func testNobodysReadings() {
        let rules = PersonAttribution(owners: [("Ana", ["A0:9E:1A:00:00:01"])])
        XCTAssertEqual(rules.attribute(device: nil, at: ten), .unattributed(.noDevice))
        XCTAssertEqual(rules.attribute(device: cuff, at: ten), .unattributed(.nobody))
        XCTAssertFalse(rules.isEmpty)
        XCTAssertTrue(PersonAttribution().isEmpty)
    }
}

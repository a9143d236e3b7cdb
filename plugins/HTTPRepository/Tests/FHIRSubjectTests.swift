import Foundation
import HealthModel
import HealthStore
import RemoteSinkKit
import XCTest

@testable import HTTPRepository

/// Issue 65: each Observation's subject is its reading's person's `Patient` reference, the
/// gateway's `patientReference` for the others; without one, a reading nobody's is not sent.
final class FHIRSubjectTests: XCTestCase {
    let strap = Device(name: "Polar H10", localIdentifier: "AA:BB:CC:DD:EE:FF")

    func reading(_ bpm: Double, _ second: Double, person: String?) throws -> HealthRecord {
        let date = Date(timeIntervalSince1970: 1_800_000_000 + second)
        return .quantity(try QuantitySample(
            id: SampleID(UUID()), type: .oxygenSaturation, quantity: Quantity(bpm, .percent), start: date, end: date, device: strap,
            metadata: person.map { [.person: .string($0)] } ?? [:]))
    }

    /// The subjects of the Observations in the body of `records`, by uuid.
    func subjects(_ builder: PayloadBuilder, _ records: [HealthRecord]) throws -> [SampleID: String] {
        let changes = records.enumerated().map { FollowedChange.stored($1, anchor: Int64($0 + 1)) }.filter(builder.accepts)
        let batch = FollowerBatch(after: 0, through: Int64(records.count), changes: changes, payloadIdentity: builder.identity)
        let body = try XCTUnwrap(try builder.body(for: batch))
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        var subjects: [SampleID: String] = [:]
        for entry in bundle["entry"] as? [[String: Any]] ?? [] {
            let resource = try XCTUnwrap(entry["resource"] as? [String: Any])
            let id = try XCTUnwrap(SampleID(string: String((entry["fullUrl"] as? String ?? "").dropFirst("urn:uuid:".count))))
            subjects[id] = (resource["subject"] as? [String: Any])?["reference"] as? String
        }
        return subjects
    }

    func testEachReadingGoesUnderItsPersonsPatient() throws {
        let ana = try reading(97, 0, person: "Ana"), ben = try reading(95, 1, person: "Ben"), nobody = try reading(93, 2, person: nil)
        let people = PayloadBuilder(format: .fhirR4, patientReference: nil, patients: ["Ana": "Patient/ana-7", "Ben": "Patient/ben-2"])
        XCTAssertEqual(try subjects(people, [ana, ben, nobody]), [ana.id: "Patient/ana-7", ben.id: "Patient/ben-2"], "nobody's is not sent")
        XCTAssertFalse(people.accepts(.stored(nobody, anchor: 3)))
        XCTAssertTrue(people.accepts(.deleted(.init(id: nobody.id, kind: .quantity, type: "oxygenSaturation", anchor: 4))), "deletions go")

        let gateway = PayloadBuilder(format: .fhirR4, patientReference: "Patient/clinic", patients: ["Ana": "Patient/ana-7"])
        XCTAssertEqual(
            try subjects(gateway, [ana, ben, nobody]), [ana.id: "Patient/ana-7", ben.id: "Patient/clinic", nobody.id: "Patient/clinic"])
        // The people are part of the batch's identity: a changed reference is a different body.
        XCTAssertNotEqual(gateway.identity, PayloadBuilder(format: .fhirR4, patientReference: "Patient/clinic").identity)
    }

    /// Open mHealth: a person's user id is each of their data points' header `user_id`.
    func testOpenMHealthHeadersCarryThePersonsUserID() throws {
        let ana = try reading(97, 0, person: "Ana"), nobody = try reading(93, 2, person: nil)
        let builder = PayloadBuilder(format: .openMHealth, patientReference: nil, users: ["Ana": "u-ana-7"])
        let batch = FollowerBatch(
            after: 0, through: 2, changes: [.stored(ana, anchor: 1), .stored(nobody, anchor: 2)], payloadIdentity: builder.identity)
        let points = try XCTUnwrap(try JSONSerialization.jsonObject(with: XCTUnwrap(try builder.body(for: batch))) as? [[String: Any]])
        let users = points.map { ($0["header"] as? [String: Any])?["user_id"] as? String }
        XCTAssertEqual(users, ["u-ana-7", nil])
        XCTAssertNotEqual(builder.identity, PayloadBuilder(format: .openMHealth, patientReference: nil).identity)
    }
}

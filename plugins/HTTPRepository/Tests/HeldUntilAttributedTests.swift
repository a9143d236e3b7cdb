import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

@testable import HTTPRepository

/// Issue 65, against a real recording server: a FHIR receiver without a gateway-wide
/// `patientReference` is sent nothing of an unattributed weighing; `participant attribute`
/// (``HealthStore/attribute(_:to:)``) makes a new version of it, which goes under the person's
/// Patient, valid R4.
final class HeldUntilAttributedTests: RepositoryAndStoreTestCase {
    func testAnUnattributedWeighingGoesOnceAttributed() async throws {
        let scale = Device(name: "MIBFS", localIdentifier: "C8:47:8C:01:02:03")
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let weighing = try QuantitySample(
            id: ids.next(), type: .bodyMass, quantity: Quantity(70.4, .kilogram), start: date, end: date, device: scale)
        let ana = ParticipantCharacteristics(
            name: "Ana", devices: [], characteristics: UserCharacteristics(), fhirPatient: "Patient/ana-7")
        let running = try await start(
            configuration { $0.format = .fhirR4 }, records: [.quantity(weighing)], participants: [ana])
        try await waitUntilSent()
        XCTAssertEqual(server.requests().count, 0, "nobody's weighing has no subject: held")

        let changed = try await store.attribute(.ids([weighing.id]), to: "Ana")
        try await waitUntilSent()
        try await finish(running)
        let requests = server.requests()
        XCTAssertEqual(requests.count, 1)
        let bundle = try XCTUnwrap(requests.first?.body as? [String: Any])
        let entries = try XCTUnwrap(bundle["entry"] as? [[String: Any]])
        let put = try XCTUnwrap(entries.first { ($0["request"] as? [String: String])?["method"] == "PUT" })
        let resource = try XCTUnwrap(put["resource"] as? [String: Any])
        XCTAssertEqual(resource["id"] as? String, changed.first?.after.uuidString.lowercased())
        XCTAssertEqual((resource["subject"] as? [String: Any])?["reference"] as? String, "Patient/ana-7")
        XCTAssertEqual(try validate("fhir"), "ok 2", "the new version and the old one's deletion")
    }
}

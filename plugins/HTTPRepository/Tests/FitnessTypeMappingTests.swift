import Foundation
import GatewayRuntime
import HealthModel
@testable import HTTPRepository
import XCTest

/// The cycling and rowing quantity types in the FHIR and Open mHealth type tables.
final class FitnessTypeMappingTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 15, milliseconds: { 1_800_000_000_000 })

    func testFHIRCodesAndUnits() {
        let rows: [(QuantityType, String, String)] = [
            (.cyclingSpeed, "Cycling speed", "m/s"), (.cyclingCadence, "Cycling cadence", "/min"),
            (.cyclingPower, "Cycling power", "W"), (.distanceCycling, "Cycling distance", "m"),
            (.distanceRowing, "Rowing distance", "m"), (.rowingSpeed, "Rowing speed", "m/s"),
            (.runningPower, "Running power", "W"), (.rowingPower, "Rowing power", "W"),
            (.rowingStrokeRate, "Rowing stroke rate", "/min"),
        ]
        for (type, display, ucum) in rows {
            let code = FHIRMapping.code(for: type)
            XCTAssertNil(code.loinc, "no LOINC term for \(type)")
            XCTAssertEqual(code.display, display)
            XCTAssertEqual(code.ucum, ucum)
            XCTAssertEqual(code.category, "activity")
        }
    }

    func testOpenMHealthTakesCyclingAndRowingDistanceAsPhysicalActivity() throws {
        for (type, activity) in [(QuantityType.distanceCycling, "cycling"), (.distanceRowing, "rowing")] {
            XCTAssertEqual(OpenMHealthMapping.schema(for: type)?.name, "physical-activity")
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            let sample = try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(1.5, try HealthUnit("km")), start: start,
                end: start.addingTimeInterval(60))
            guard case .object(let body) = OpenMHealthMapping.body(sample) else { return XCTFail("not an object") }
            XCTAssertEqual(body["activity_name"], .string(activity))
            XCTAssertEqual(body["distance"], .object(["value": .number(1500), "unit": .string("m")]))
        }
        for type in [QuantityType.cyclingSpeed, .cyclingCadence, .cyclingPower, .rowingSpeed, .runningPower, .rowingPower, .rowingStrokeRate] {
            XCTAssertNil(OpenMHealthMapping.schema(for: type), "\(type) has no Open mHealth schema")
        }
    }
}

import Foundation
import GatewayRuntime
import GatewayTesting
import GatewayTime
import HealthModel
import HealthStore
@testable import HTTPRepository
import RemoteSinkKit
import SampleBus
import XCTest

/// The `fhir-phd` form through the real sink, over a real store, to the recording repository:
/// every Bundle validated as FHIR R4 (fhir.resources, strict) and against the PHD guide's
/// required elements (`validate_payloads.py fhir-phd`, each check naming its FSH rule).
final class PHDDeliveryTests: RepositoryAndStoreTestCase {
    let oximeter = Device(
        name: "Nonin 3230", manufacturer: "Nonin_Medical_Inc.", model: "Model 3230", firmwareVersion: "r2.1",
        localIdentifier: "00:1C:05:FF:E8:74")
    let scale = Device(name: "A&D UC-352BLE", manufacturer: "A&D", model: "UC-352BLE", localIdentifier: "A0:9E:1A:12:34:56")

    func testPHDBundlesValidateAsR4AndAgainstTheGuideAndDeletionsFollow() async throws {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let spo2 = try QuantitySample(
            id: ids.next(), type: .oxygenSaturation, quantity: Quantity(97, .percent), start: at, end: at, device: oximeter,
            metadata: [
                .mdcObservationType: .integer(150_456), .mdcUnit: .integer(544), .deviceTimestamp: .string("2027-01-15T07:01:00.250Z"),
                .mdcSupplementalTypes: .string("150588"), .mdcDeviceSpecializations: .string("4100:1"), .deviceClock: .bool(true),
            ])
        // The cuff's clock ran 90 s fast: the gateway moved its readings by −90 s (the Blood
        // Pressure and Weight Scale profiles' mapper keeps the stamp as the device stated it).
        let fast: Metadata = [.deviceTimestamp: .string("2027-01-15T08:01:30-00:00")]
        func corrected(_ more: Metadata) -> Metadata {
            var metadata = fast
            for (key, value) in more { metadata[key] = value }
            return metadata
        }
        func pressure(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: at, end: at, device: scale)
        }
        let bloodPressure = try CorrelationSample.bloodPressure(
            id: ids.next(), systolic: pressure(.bloodPressureSystolic, 131), diastolic: pressure(.bloodPressureDiastolic, 84), device: scale,
            metadata: corrected([
                .meanArterialPressure: .double(99.7), .mdcDeviceSpecializations: .string(MDCDeviceSpecialization.bloodPressure.listed),
            ]))
        let weight = try QuantitySample(
            id: ids.next(), type: .bodyMass, quantity: Quantity(72.4, .kilogram), start: at, end: at, device: scale,
            metadata: corrected([.mdcDeviceSpecializations: .string(MDCDeviceSpecialization.weightScale.listed)]))
        let lead = try XCTUnwrap(QuantityType.named("mdc.131330.4274"))
        let ecg = try QuantitySeriesSample(
            id: ids.next(), type: lead, unit: .millivolt,
            quantities: [0.1, 0.4, 1.1, -0.3, 0.0, 0.2].enumerated().map { index, value in
                let time = at.addingTimeInterval(Double(index) * 0.004)
                return SeriesQuantity(value: value, start: time, end: time)
            },
            device: oximeter, metadata: [.mdcUnit: .integer(4274)])
        let leanMass = try quantity(.leanBodyMass, 55.2, .kilogram, seconds: 0)
        // A generic observation, and readings the device marked invalid, and questionable test data.
        let respiration = try QuantitySample(
            id: ids.next(), type: try XCTUnwrap(QuantityType.named("mdc.151562.2784")), quantity: Quantity(15, .countPerMinute), start: at,
            end: at.addingTimeInterval(30), device: oximeter, metadata: [.mdcMeasurementDuration: .double(30)])
        let invalid = try QuantitySample(
            id: ids.next(), type: .oxygenSaturation, quantity: Quantity(40, .percent), start: at, end: at, device: oximeter,
            metadata: [.mdcMeasurementStatus: .integer(1)])
        let questionable = try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(64, .countPerMinute), start: at, end: at, device: oximeter,
            metadata: [
                .mdcMeasurementStatus: .integer(1 << 1 | 1 << 4), .syncIdentifier: .string("oximeter/64"),
                .mdcDeviceSpecializations: .string(MDCDeviceSpecialization.pulseOximeter.listed),
            ])
        // A coded value: a cuff's "cuff loose" (3::240), a simple discrete observation.
        let coded = try QuantitySample(
            id: ids.next(), type: try XCTUnwrap(QuantityType.named("mdc.8410608.512")), quantity: Quantity(196_848, .count), start: at,
            end: at, device: oximeter,
            metadata: [.mdcValueKind: .string("code"), .deviceTimestamp: .string("2027-01-15T07:02:00.000Z"), .deviceClock: .bool(true)])
        // A string observation, an empty one, and a TLV-encoded one's attributes (GHSObservationMapper's metadata).
        func generic(_ code: UInt32, _ metadata: Metadata) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: try XCTUnwrap(QuantityType.named("mdc.\(code).512")), quantity: Quantity(1, .count), start: at, end: at,
                device: oximeter, metadata: metadata)
        }
        let text = try generic(68_218, [.mdcValueKind: .string("text"), .mdcText: .string("Sensor off the finger")])
        let emptyText = try generic(68_218, [.mdcValueKind: .string("text"), .mdcText: .string("")])
        let attributes = try generic(8_454_261, [
            .mdcValueKind: .string("attributes"), .mdcAttribute(68_220): .integer(5), .mdcAttribute(68_220, occurrence: 2): .double(2.5),
            .mdcAttribute(68_221): .string("abc"), .mdcAttribute(68_222): .bool(false), .mdcAttribute(68_223): .string(""),
        ])
        // The cuff's pulse rate (its Blood Pressure specialization: MDC_PULS_RATE_NON_INV), and a
        // strap's heart-rate series on a 1 s grid (MDC_ECG_HEART_RATE, LOINC 8867-4, sampled data).
        let pulse = try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(71, .countPerMinute), start: at, end: at, device: scale,
            metadata: corrected([
                .mdcDeviceSpecializations: .string(MDCDeviceSpecialization.bloodPressure.listed),
                // A reading the device keeps has a sync identifier: a plain sample, not a series.
                .syncIdentifier: .string("A0:9E:1A:12:34:56/bloodPressure/2027-01-15T08:01:30/heartRate"),
            ]))
        let strap = Device(name: "Polar H10 A1B2C3D4", manufacturer: "Polar Electro Oy", localIdentifier: "C8:2F:3A:11:22:33")
        let strapSeries = try QuantitySeriesSample(
            id: ids.next(), type: .heartRate, unit: .countPerMinute,
            quantities: [70.0, 71, 73, 72].enumerated().map { index, value in
                SeriesQuantity(value: value, start: at.addingTimeInterval(Double(index)), end: at.addingTimeInterval(Double(index)))
            },
            device: strap)
        let records: [HealthRecord] = [
            .quantity(spo2), .correlation(bloodPressure), .quantity(weight), .quantitySeries(ecg), leanMass, .quantity(respiration),
            .quantity(invalid), .quantity(questionable), .quantity(coded), .quantity(text), .quantity(emptyText), .quantity(attributes),
            .quantity(pulse), .quantitySeries(strapSeries),
        ]

        let running = try await start(
            configuration {
                $0.format = .fhirPHD
                $0.patientReference = "Patient/example"
            }, records: records, hardwareAddress: "dc:a6:32:12:34:56", clockState: .synchronized(maximumErrorSeconds: 0.02))
        let expectedKey = try await firstBatch(of: running).key
        try await waitUntilSent()
        _ = try await store.delete(.ids([spo2.id]))
        try await waitUntilSent()
        try await finish(running)

        // Thirteen Observations, the cuff's coincident time stamp and a deletion; the lean body
        // mass has no MDC code.
        XCTAssertEqual(try validate("fhir-phd"), "ok 15")
        let requests = server.requests()
        XCTAssertEqual(requests.map(\.method), ["POST", "POST"])
        XCTAssertEqual(requests.first?.headers["Content-Type"], "application/fhir+json")
        XCTAssertEqual(requests.first?.headers["Idempotency-Key"], expectedKey)
        let first = try XCTUnwrap(requests.first?.body as? [String: Any])
        let entries = try XCTUnwrap(first["entry"] as? [[String: Any]])
        let methods = entries.compactMap { $0["request"] as? [String: String] }.map { "\($0["method"] ?? "") \($0["url"] ?? "")" }
        XCTAssertEqual(methods, Array(repeating: "POST Device", count: 4) + Array(repeating: "POST Observation", count: 14))
        let profiles = entries.compactMap { (($0["resource"] as? [String: Any])?["meta"] as? [String: Any])?["profile"] as? [String] }.map { $0[0] }
        XCTAssertEqual(profiles.map { $0.split(separator: "/").last.map(String.init) }, [
            "PhgDevice", "PhdDevice", "PhdDevice", "PhdDevice", "PhdCoincidentTimeStampObservation", "PhdNumericObservation",
            "PhdCompoundNumericObservation",
            "PhdNumericObservation", "PhdRtsaObservation", "PhdNumericObservation", "PhdNumericObservation", "PhdNumericObservation",
            "PhdCodedEnumerationObservation", "PhdStringObservation", "PhdStringObservation", "PhdCompoundObservation",
            "PhdNumericObservation", "PhdRtsaObservation",
        ])
        // The store kept the text and the attributes, which the Observations carry.
        let resources = entries.compactMap { $0["resource"] as? [String: Any] }
        // The gateway: its system identifier from the machine's MAC, its clock NTP-synchronised.
        let gatewayIdentifiers = (resources[0]["identifier"] as? [[String: Any]])?.map { $0["value"] as? String }
        XCTAssertEqual(gatewayIdentifiers, ["DC-A6-32-FF-FE-12-34-56", "DC-A6-32-12-34-56", "healthgate"])
        let timeSync = (resources[0]["property"] as? [[String: Any]])?.first?["valueCode"] as? [[String: Any]]
        XCTAssertEqual((timeSync?.first?["coding"] as? [[String: Any]])?.first?["code"] as? String, "532226")
        // One coincident time stamp for the cuff's time base, which its three readings refer to;
        // the oximeter's readings were dated by its own clock, the strap's had no time stamp.
        let stampUrl = entries[4]["fullUrl"] as? String
        XCTAssertEqual(resources[4]["valueDateTime"] as? String, "2027-01-15T08:01:30-00:00")
        let referring = resources.compactMap { resource in
            ((resource["extension"] as? [[String: Any]])?.first { $0["url"] as? String == PHDGuide.coincidentTimeStampExtension }?["valueReference"]
                as? [String: String])?["reference"]
        }
        XCTAssertEqual(referring, Array(repeating: stampUrl, count: 3).compactMap { $0 }, "the blood pressure, the weight, the pulse")
        // The GHS oximeter's specialization as it listed it; the cuff's (its first reading is the
        // blood pressure) as the Blood Pressure profile gives it.
        let phdDevices = resources.filter { (($0["meta"] as? [String: Any])?["profile"] as? [String])?.first == PHDGuide.Profile.phdDevice.url }
        let specializations = phdDevices.compactMap { device in
            ((device["specialization"] as? [[String: Any]])?.first?["systemType"] as? [String: Any]).flatMap { ($0["coding"] as? [[String: Any]])?.first?["code"] as? String }
        }
        XCTAssertEqual(specializations, ["528388", "528391", "528457"], "MDC_DEV_SPEC_PROFILE_PULS_OXIM, MDC_DEV_SPEC_PROFILE_BP, generic")
        XCTAssertEqual(resources.compactMap { $0["valueString"] as? String }, ["Sensor off the finger"])
        let compound = try XCTUnwrap(resources[resources.count - 3]["component"] as? [[String: Any]])
        XCTAssertEqual(compound.map { $0["valueString"] as? String }, [nil, nil, "abc", "false", nil])
        let deletion = try XCTUnwrap((requests.last?.body as? [String: Any])?["entry"] as? [[String: Any]])
        XCTAssertEqual(
            deletion.compactMap { $0["request"] as? [String: String] },
            [["method": "DELETE", "url": "Observation?identifier=urn:ietf:rfc:3986|urn:uuid:\(spo2.id.uuidString)"]])
        // Left out, said once and counted.
        XCTAssertEqual(running.status.current?.details["leftOut"], "1")
        XCTAssertEqual(running.logs.entries.filter { $0.message.contains("readings of leanBodyMass") }.count, 1)

        // The validator is no rubber stamp: the same Bundle without the gateway, with the cuff's
        // pulse rate coded as an oximeter's, with a placeholder version, or with the strap's
        // sampled heart rate without its LOINC code, fails the rule it breaks.
        let body = try XCTUnwrap(requests.first?.body as? [String: Any])
        XCTAssertEqual(
            try validate(body, changing: 5) { $0["extension"] = nil },
            "invalid: AssertionError: body 0 entry 5 (PhdNumericObservation): extension[GatewayDevice] 1..1")
        XCTAssertEqual(
            try validate(body, changing: 4) { $0["status"] = "preliminary" },
            "invalid: AssertionError: body 0 entry 4 (PhdCoincidentTimeStampObservation): status = #final (exactly)")
        XCTAssertEqual(
            try validate(body, changing: 16) {
                $0["code"] = ["coding": [["system": PHDGuide.mdcSystem, "code": "149530"], ["system": "http://loinc.org", "code": "8867-4"]]]
            },
            "invalid: AssertionError: body 0 entry 16 (PhdNumericObservation): the pulse rate of a device of specialization 528391 "
                + "is MDC 149546 (ProfileConsumers.md, \"The Measurement Type\"), not ['149530']")
        XCTAssertEqual(
            try validate(body, changing: 0) { gateway in gateway["property"] = nil },
            "invalid: AssertionError: body 0 entry 0 (PhgDevice): PhgDevice property[timeSyncProperty] (type MDC#68220): "
                + "the time synchronization method, 0..1, required to be reported (PhgDevice purpose)")
        XCTAssertEqual(
            try validate(body, changing: 1) { device in
                device["identifier"] = [["system": "http://hl7.org/fhir/sid/eui-48/bluetooth", "value": "00-1C-05-FF-E8-74"]]
            },
            "invalid: AssertionError: body 0 entry 1 (PhdDevice): PhdDevice with a Bluetooth address: identifier[btmacAddressIdentifier], "
                + "\"it shall provide a transport address\"")
        XCTAssertEqual(
            try validate(body, changing: 1) { device in
                device["version"] = [["type": ["coding": [["system": PHDGuide.mdcSystem, "code": "531976"]]], "value": "unknown"]]
            },
            "invalid: AssertionError: body 0 entry 1 (PhdDevice): PhdDevice version[MDCType].value: a version the device reported, not 'unknown'")
        XCTAssertEqual(
            try validate(body, changing: 17) { $0["code"] = ["coding": [["system": PHDGuide.mdcSystem, "code": "147842"]]] },
            "invalid: AssertionError: body 0 entry 17 (PhdRtsaObservation): a heart rate (MDC 147842) has LOINC 8867-4, "
                + "whatever its value (Nomenclaturecodes.md)")
    }

    /// What the validator says of `body` with the resource of entry `index` changed by `change`.
    func validate(_ body: [String: Any], changing index: Int, _ change: (inout [String: Any]) -> Void) throws -> String {
        var broken = body
        var entries = try XCTUnwrap(broken["entry"] as? [[String: Any]])
        var resource = try XCTUnwrap(entries[index]["resource"] as? [String: Any])
        change(&resource)
        entries[index]["resource"] = resource
        broken["entry"] = entries
        let recording = directory.appendingPathComponent("broken-\(index).jsonl")
        try JSONSerialization.data(withJSONObject: ["method": "POST", "body": broken]).write(to: recording)
        return try validate("fhir-phd", recording: recording)
    }
}

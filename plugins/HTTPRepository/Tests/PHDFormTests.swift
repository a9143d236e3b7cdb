import Foundation
import GatewayRuntime
import GatewayTesting
import GatewayTime
import HealthModel
import HealthStore
import RemoteSinkKit
import XCTest

@testable import HTTPRepository

/// The `fhir-phd` form's encoding (``PHDMapping``): each kind of record as the HL7 Personal
/// Health Device guide (github.com/HL7/phd, `input/fsh`) profiles it, the Devices, the
/// conditional-create identifier and the measurement status, without a server.
/// `PHDDeliveryTests` sends them through the sink and validates them.
final class PHDFormTests: XCTestCase {
    static let patient = "Patient/example"
    let builder = PayloadBuilder(format: .fhirPHD, patientReference: PHDFormTests.patient, gatewayName: "clinic-north-3")

    /// A pulse oximeter that speaks GHS, as input/examples/phd-74E8FFFEFF051C00.001C05FFE874.json describes one.
    static let oximeter = Device(
        name: "Nonin 3230", manufacturer: "Nonin_Medical_Inc.", model: "Model 3230", hardwareVersion: "r1.0", firmwareVersion: "r2.1",
        softwareVersion: "r1.5 9.7", localIdentifier: "00:1C:05:FF:E8:74")
    static let scale = Device(name: "A&D UC-352BLE", manufacturer: "A&D", model: "UC-352BLE", localIdentifier: "A0:9E:1A:12:34:56")
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    // MARK: Helpers

    /// The Bundle of `records` (and `deletions`), each change at its own anchor.
    func bundle(
        _ records: [HealthRecord], deletions: [StoreChanges.Deletion] = [], builder: PayloadBuilder? = nil
    ) throws -> [String: Any] {
        let builder = builder ?? self.builder
        var changes = records.enumerated().map { FollowedChange.stored($1, anchor: Int64($0 + 1)) }
        changes += deletions.map(FollowedChange.deleted)
        let batch = FollowerBatch(after: 0, through: Int64(changes.count), changes: changes.filter(builder.accepts), payloadIdentity: builder.identity)
        let body = try XCTUnwrap(try builder.body(for: batch), "no body")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    }

    func entries(_ bundle: [String: Any]) -> [[String: Any]] { bundle["entry"] as? [[String: Any]] ?? [] }

    /// The Observations of a Bundle's readings, in order (not its Coincident Time Stamps).
    func observations(_ bundle: [String: Any]) -> [[String: Any]] {
        entries(bundle).compactMap { $0["resource"] as? [String: Any] }.filter {
            $0["resourceType"] as? String == "Observation" && profiles($0) != [PHDGuide.Profile.coincidentTimeStamp.url]
        }
    }

    /// The Coincident Time Stamp Observations of a Bundle, in order.
    func coincidentTimeStamps(_ bundle: [String: Any]) -> [[String: Any]] {
        entries(bundle).compactMap { $0["resource"] as? [String: Any] }.filter { profiles($0) == [PHDGuide.Profile.coincidentTimeStamp.url] }
    }

    func profiles(_ resource: [String: Any]) -> [String]? { (resource["meta"] as? [String: Any])?["profile"] as? [String] }

    /// The reference of an Observation's CoincidentTimeStampReference extension.
    func coincidentReference(_ observation: [String: Any]) -> String? {
        reference((observation["extension"] as? [[String: Any]])?.first { $0["url"] as? String == PHDGuide.coincidentTimeStampExtension }?["valueReference"])
    }

    /// The resource whose entry's fullUrl is `url`.
    func resource(_ bundle: [String: Any], at url: String?) -> [String: Any]? {
        entries(bundle).first { $0["fullUrl"] as? String == url }?["resource"] as? [String: Any]
    }

    func codings(_ concept: Any?) -> [[String: Any]] { (concept as? [String: Any])?["coding"] as? [[String: Any]] ?? [] }

    func codes(_ concept: Any?, system: String) -> [String] {
        codings(concept).filter { $0["system"] as? String == system }.compactMap { $0["code"] as? String }
    }

    func reference(_ value: Any?) -> String? { (value as? [String: Any])?["reference"] as? String }

    func sample(
        _ type: QuantityType, _ value: Double, _ unit: HealthUnit, device: Device? = PHDFormTests.oximeter, metadata: Metadata = [:],
        seconds: Double = 0
    ) throws -> QuantitySample {
        try QuantitySample(
            id: SampleID(UUID()), type: type, quantity: Quantity(value, unit), start: Self.epoch, end: Self.epoch.addingTimeInterval(seconds),
            device: device, metadata: metadata)
    }

    /// What the GHS source writes for a pulse oximeter's SpO2 (GHSObservationMapper.baseMetadata),
    /// placed at its own time stamp (`deviceClock`).
    static let ghsMetadata: Metadata = [
        .mdcObservationType: .integer(150_456), .mdcUnit: .integer(544), .deviceTimestamp: .string("2021-11-22T12:56:30.567+01:00"),
        .deviceClock: .bool(true),
        .mdcSupplementalTypes: .string("150588"), .mdcDeviceSpecializations: .string("4100:1"), .deviceSerialNumber: .string("501900083"),
        .gatewayVersion: .string("1.4.0"),
    ]

    // MARK: Numeric

    func testSpO2FromAGenericHealthSensorIsANumericObservationWithTheCodeTheDeviceSent() throws {
        let spo2 = try sample(.oxygenSaturation, 97, .percent, metadata: Self.ghsMetadata)
        let bundle = try bundle([.quantity(spo2)])
        XCTAssertEqual(bundle["type"] as? String, "transaction")
        let entry = try XCTUnwrap(entries(bundle).last)
        let observation = try XCTUnwrap(entry["resource"] as? [String: Any])
        XCTAssertEqual((observation["meta"] as? [String: Any])?["profile"] as? [String], [PHDGuide.Profile.numeric.url])
        // The code the device sent, in MDC, and the R4 vital-signs code (PHD: "the corresponding
        // LOINC code shall be present"), with both categories.
        XCTAssertEqual(codes(observation["code"], system: "urn:iso:std:iso:11073:10101"), ["150456"])
        XCTAssertEqual(codings(observation["code"]).first?["display"] as? String, "MDC_PULS_OXIM_SAT_O2")
        XCTAssertEqual(codes(observation["code"], system: "http://loinc.org"), ["2708-6"])
        let categories = (observation["category"] as? [Any] ?? []).flatMap { codes($0, system: PHDGuide.categorySystem) }
        XCTAssertEqual(categories, ["phd"])
        XCTAssertEqual(
            (observation["category"] as? [Any] ?? []).flatMap { codes($0, system: "http://terminology.hl7.org/CodeSystem/observation-category") },
            ["vital-signs"])
        let value = try XCTUnwrap(observation["valueQuantity"] as? [String: Any])
        XCTAssertEqual(value["value"] as? Double, 97)
        XCTAssertEqual(value["system"] as? String, "http://unitsofmeasure.org")
        XCTAssertEqual(value["code"] as? String, "%")
        XCTAssertEqual(observation["status"] as? String, "final")
        XCTAssertEqual(reference(observation["subject"]), Self.patient)
        XCTAssertEqual(observation["effectiveDateTime"] as? String, RFC3339.string(from: Self.epoch))
        // The supplemental type MDC_MODALITY_SPOT as a component (PhdBaseObservation.fsh).
        let component = try XCTUnwrap((observation["component"] as? [[String: Any]])?.first)
        XCTAssertEqual(codes(component["code"], system: PHDGuide.mdcSystem), ["68193"])
        XCTAssertEqual(codes(component["valueCodeableConcept"], system: PHDGuide.mdcSystem), ["150588"])

        // The guide's identifier: device-patient-type-timestamp-supplemental types; the local
        // time 12:56:30.567 counted from 2000 with its offset +1 h as +4 quarter hours.
        let identifiers = try XCTUnwrap(observation["identifier"] as? [[String: String]])
        let expected = "001C05FFE874-example-150456-690900990.567+4-150588"
        XCTAssertEqual(identifiers.first, ["system": PHDGuide.observationIdentifierSystem, "value": expected])
        XCTAssertEqual(identifiers.last, ["system": "urn:ietf:rfc:3986", "value": "urn:uuid:\(spo2.id.uuidString)"])
        // Created unless the server holds one with either (the `+` percent-encoded in the query):
        // another gateway's upload of the same reading, or this one's.
        let request = try XCTUnwrap(entry["request"] as? [String: String])
        XCTAssertEqual(request["method"], "POST")
        XCTAssertEqual(request["url"], "Observation")
        XCTAssertEqual(
            request["ifNoneExist"],
            "identifier=http://hl7.org/fhir/uv/phd/StructureDefinition/PhdBaseObservation|001C05FFE874-example-150456-690900990.567%2B4-150588"
                + ",urn:ietf:rfc:3986|urn:uuid:\(spo2.id.uuidString)")
        XCTAssertNil(observation["id"], "a create carries no id")

        // The PhdDevice and PhgDevice, created by identifier, referred to by their fullUrls.
        let device = try XCTUnwrap(resource(bundle, at: reference(observation["device"])))
        XCTAssertEqual((device["meta"] as? [String: Any])?["profile"] as? [String], [PHDGuide.Profile.phdDevice.url])
        let address = try XCTUnwrap((device["identifier"] as? [[String: Any]])?.first)
        XCTAssertEqual(address["system"] as? String, "http://hl7.org/fhir/sid/eui-48/bluetooth")
        XCTAssertEqual(address["value"] as? String, "00-1C-05-FF-E8-74")
        XCTAssertEqual(codes(address["type"], system: "http://terminology.hl7.org/CodeSystem/ContinuaDeviceIdentifiers"), ["BTMAC"])
        XCTAssertEqual(device["manufacturer"] as? String, "Nonin_Medical_Inc.")
        XCTAssertEqual(device["modelNumber"] as? String, "Model 3230")
        XCTAssertEqual(device["serialNumber"] as? String, "501900083")
        XCTAssertEqual(codes(device["type"], system: PHDGuide.mdcSystem), ["65573"])
        // Health Sensor Features' term code 4100 is MDC_DEV_SPEC_PROFILE_PULS_OXIM, 528388.
        let specialization = try XCTUnwrap((device["specialization"] as? [[String: Any]])?.first)
        XCTAssertEqual(codes(specialization["systemType"], system: PHDGuide.mdcSystem), ["528388"])
        XCTAssertEqual(specialization["version"] as? String, "1")
        let versions = (device["version"] as? [[String: Any]] ?? []).map { (codes($0["type"], system: PHDGuide.mdcSystem).first, $0["value"] as? String) }
        XCTAssertEqual(versions.map(\.0), ["531974", "531975", "531976"])
        XCTAssertEqual(versions.map(\.1), ["r1.0", "r1.5 9.7", "r2.1"])
        let deviceEntry = try XCTUnwrap(entries(bundle).first { $0["fullUrl"] as? String == reference(observation["device"]) })
        XCTAssertEqual(
            (deviceEntry["request"] as? [String: String])?["ifNoneExist"],
            "identifier=http://hl7.org/fhir/sid/eui-48/bluetooth|00-1C-05-FF-E8-74")
        let gatewayReference = try XCTUnwrap(
            (observation["extension"] as? [[String: Any]])?.first { $0["url"] as? String == PHDGuide.gatewayDeviceExtension })
        let gateway = try XCTUnwrap(resource(bundle, at: reference(gatewayReference["valueReference"])))
        XCTAssertEqual((gateway["meta"] as? [String: Any])?["profile"] as? [String], [PHDGuide.Profile.phgDevice.url])
        XCTAssertEqual(codes(gateway["type"], system: PHDGuide.mdcSystem), ["531981"])
        XCTAssertEqual((gateway["identifier"] as? [[String: String]])?.first?["value"], "clinic-north-3")
        XCTAssertEqual((gateway["version"] as? [[String: Any]])?.first?["value"] as? String, "1.4.0")
        XCTAssertEqual(entries(bundle).count, 3, "the gateway, the device, the Observation")
    }

    /// A Weight Scale reading (the Bluetooth profile: no MDC metadata but its specialization): the
    /// code from the table, its canonical unit's UCUM code; height in cm and BMI in kg/m2, as R4's
    /// vital signs take them.
    func testAWeightFromTheWeightScaleProfileTakesItsCodeFromTheTable() throws {
        let metadata: Metadata = [
            .deviceTimestamp: .string("2027-01-15T08:01:00-00:00"), .userIndex: .integer(1),
            .mdcDeviceSpecializations: .string(MDCDeviceSpecialization.weightScale.listed),
        ]
        let weight = try sample(.bodyMass, 72.45, .kilogram, device: Self.scale, metadata: metadata)
        let height = try sample(.height, 1.782, .meter, device: Self.scale, metadata: metadata)
        let bmi = try sample(.bodyMassIndex, 22.8, .count, device: Self.scale, metadata: metadata)
        let bundle = try bundle([.quantity(weight), .quantity(height), .quantity(bmi)])
        let sent = observations(bundle)
        XCTAssertEqual(sent.map { codes($0["code"], system: PHDGuide.mdcSystem) }, [["188736"], ["188740"], ["188752"]])
        XCTAssertEqual(sent.map { codes($0["code"], system: "http://loinc.org") }, [["29463-7"], ["8302-2"], ["39156-5"]])
        let values = sent.map { $0["valueQuantity"] as? [String: Any] ?? [:] }
        XCTAssertEqual(values.map { $0["code"] as? String }, ["kg", "cm", "kg/m2"])
        XCTAssertEqual(values[0]["value"] as? Double, 72.45)
        XCTAssertEqual(values[1]["value"] as? Double ?? 0, 178.2, accuracy: 1e-9)
        XCTAssertEqual(values[2]["value"] as? Double, 22.8)
        // The local time of unknown offset the scale stamped (2027-01-15T08:01:00 is 853_315_260 s after 2000).
        let identifier = (sent[0]["identifier"] as? [[String: String]])?.first?["value"]
        XCTAssertEqual(identifier, "A09E1A123456-example-188736-853315260")
        // Device Information gave no version: the PhdDevice has none (no placeholder), nor has the
        // PhgDevice of readings that do not say the gateway's version.
        // The specialization is the Weight Scale profile's, as the transcoding white paper gives it.
        let device = try XCTUnwrap(resource(bundle, at: reference(sent[0]["device"])))
        XCTAssertNil(device["version"])
        let gatewayReference = (sent[0]["extension"] as? [[String: Any]])?.first { $0["url"] as? String == PHDGuide.gatewayDeviceExtension }
        let gateway = try XCTUnwrap(resource(bundle, at: reference(gatewayReference?["valueReference"])))
        XCTAssertNil(gateway["version"])
        // A device that reported only its firmware has that version alone.
        let firmwareOnly = Device(manufacturer: "A&D", model: "UC-352BLE", firmwareVersion: "1.07", localIdentifier: "A0:9E:1A:12:34:57")
        let reported = try XCTUnwrap(PHDDeviceMapping.phd(firmwareOnly, metadata: [:])?.resource["version"])
        XCTAssertEqual(reported, .array([PHDDeviceMapping.version(.firmware, "1.07")]))
        XCTAssertEqual(reported, .array([.object([
            "type": .object(["coding": .array([.object([
                "system": .string(PHDGuide.mdcSystem), "code": .string("531976"), "display": .string("MDC_ID_PROD_SPEC_FW"),
            ])])]),
            "value": .string("1.07"),
        ])]))
        let specialization = try XCTUnwrap((device["specialization"] as? [[String: Any]])?.first)
        XCTAssertEqual(codes(specialization["systemType"], system: PHDGuide.mdcSystem), ["528399"])
        XCTAssertEqual(codings(specialization["systemType"]).first?["display"] as? String, "MDC_DEV_SPEC_PROFILE_SCALE")
        XCTAssertEqual(specialization["version"] as? String, "1")
        XCTAssertEqual(entries(bundle).filter { ($0["request"] as? [String: String])?["url"] == "Device" }.count, 2, "one device, one gateway")

        // A reading that names no specialization (stored before readings carried theirs): the generic one.
        let older = try sample(.bodyMass, 72.4, .kilogram, device: Self.scale)
        let olderBundle = try self.bundle([.quantity(older)])
        let olderDevice = try XCTUnwrap(resource(olderBundle, at: reference(observations(olderBundle)[0]["device"])))
        let generic = (olderDevice["specialization"] as? [[String: Any]])?.first
        XCTAssertEqual(codes(generic?["systemType"], system: PHDGuide.mdcSystem), ["528457"])
    }

    /// Each older profile's readings name the specialization the transcoding white paper gives
    /// its device: the mappers of the Bluetooth profiles write it, the PhdDevice carries it.
    func testEachOlderProfileNamesItsSpecialization() throws {
        let expected: [(MDCDeviceSpecialization, String, String)] = [
            (.pulseOximeter, "528388", "MDC_DEV_SPEC_PROFILE_PULS_OXIM"), (.bloodPressure, "528391", "MDC_DEV_SPEC_PROFILE_BP"),
            (.thermometer, "528392", "MDC_DEV_SPEC_PROFILE_TEMP"), (.weightScale, "528399", "MDC_DEV_SPEC_PROFILE_SCALE"),
            (.glucoseMeter, "528401", "MDC_DEV_SPEC_PROFILE_GLUCOSE"), (.bodyComposition, "528404", "MDC_DEV_SPEC_PROFILE_BCA"),
            (.continuousGlucose, "528409", "MDC_DEV_SPEC_PROFILE_CGM"),
        ]
        XCTAssertEqual(expected.map(\.0), MDCDeviceSpecialization.allCases)
        for (specialization, code, reference) in expected {
            let reading = try sample(.bodyMass, 70, .kilogram, device: Self.scale, metadata: [.mdcDeviceSpecializations: .string(specialization.listed)])
            let sent = try bundle([.quantity(reading)])
            let device = try XCTUnwrap(resource(sent, at: self.reference(observations(sent)[0]["device"])))
            let listed = try XCTUnwrap((device["specialization"] as? [[String: Any]])?.first)
            XCTAssertEqual(codes(listed["systemType"], system: PHDGuide.mdcSystem), [code], "\(specialization)")
            XCTAssertEqual(codings(listed["systemType"]).first?["display"] as? String, reference)
        }
    }

    /// A generic observation `mdc.{code}.{unit}`: its codes from the identifier, the UCUM unit
    /// from the table; a code whose row is a vital sign gets its LOINC code; a unit the table
    /// does not know goes as its MDC code (Nomenclaturecodes.md, "Unit codes").
    func testAGenericObservationSendsTheCodesOfItsIdentifier() throws {
        let respiration = try XCTUnwrap(QuantityType.named("mdc.151562.2784"))
        let rate = try sample(respiration, 16, .countPerMinute)
        let unknown = try XCTUnwrap(QuantityType.named("mdc.8454258.9999"))
        let odd = try sample(unknown, 3, .count)
        let sent = observations(try bundle([.quantity(rate), .quantity(odd)]))
        XCTAssertEqual(codes(sent[0]["code"], system: PHDGuide.mdcSystem), ["151562"])
        XCTAssertEqual(codes(sent[0]["code"], system: "http://loinc.org"), ["9279-1"], "MDC_RESP_RATE is the respiratory rate vital sign")
        XCTAssertEqual((sent[0]["valueQuantity"] as? [String: Any])?["code"] as? String, "/min")
        XCTAssertEqual((sent[0]["valueQuantity"] as? [String: Any])?["value"] as? Double, 16)
        XCTAssertEqual(codes(sent[1]["code"], system: PHDGuide.mdcSystem), ["8454258"])
        XCTAssertEqual(codes(sent[1]["code"], system: "http://loinc.org"), [])
        let value = try XCTUnwrap(sent[1]["valueQuantity"] as? [String: Any])
        XCTAssertEqual(value["system"] as? String, PHDGuide.mdcSystem)
        XCTAssertEqual(value["code"] as? String, String(4 * 65536 + 9999))
        XCTAssertEqual(value["value"] as? Double, 3)
    }

    /// A simple discrete observation (its value an MDC code, `healthgate.mdc.valueKind: code`)
    /// is a PhdCodedEnumerationObservation: the code in valueCodeableConcept, not a number.
    func testACodedValueIsACodedEnumerationObservation() throws {
        let status = try XCTUnwrap(QuantityType.named("mdc.8410608.512"))
        let loose = try sample(
            status, 196_848, .count,
            metadata: [.mdcObservationType: .integer(8_410_608), .mdcUnit: .integer(512), .mdcValueKind: .string("code")])
        let sent = try XCTUnwrap(observations(try bundle([.quantity(loose)])).first)
        XCTAssertEqual((sent["meta"] as? [String: Any])?["profile"] as? [String], [PHDGuide.Profile.codedEnumeration.url])
        XCTAssertEqual(codes(sent["code"], system: PHDGuide.mdcSystem), ["8410608"])
        XCTAssertEqual(codes(sent["valueCodeableConcept"], system: PHDGuide.mdcSystem), ["196848"], "cuff loose (3::240)")
        XCTAssertNil(sent["valueQuantity"])
    }

    /// A string observation (`valueKind: text`) is a PhdStringObservation with its text; a
    /// TLV-encoded one (`attributes`) a PhdCompoundObservation with a component per attribute,
    /// numbers as dimensionless quantities, text and booleans as strings; an empty string and no
    /// attributes have no value, and say why; a code that is not a whole number goes as a number.
    func testTextAndAttributesAreStringAndCompoundObservations() throws {
        func generic(_ code: UInt32, _ metadata: Metadata) throws -> QuantitySample {
            var metadata = metadata
            metadata[.mdcObservationType] = .integer(Int64(code))
            return try sample(try XCTUnwrap(QuantityType.named("mdc.\(code).512")), 1, .count, metadata: metadata)
        }
        let text = try generic(68_218, [.mdcValueKind: .string("text"), .mdcText: .string("Test Strip Buckled")])
        let attributes = try generic(8_454_261, [
            .mdcValueKind: .string("attributes"), .mdcAttribute(68_220): .integer(5), .mdcAttribute(68_220, occurrence: 2): .double(2.5),
            .mdcAttribute(68_221): .string("abc"), .mdcAttribute(68_222): .bool(true), .mdcAttribute(68_223): .string(""),
        ])
        let empty = try generic(68_218, [.mdcValueKind: .string("text"), .mdcText: .string("")])
        let none = try generic(8_454_261, [.mdcValueKind: .string("attributes")])
        let oddCode = try sample(
            try XCTUnwrap(QuantityType.named("mdc.8410608.512")), 2.5, .count, metadata: [.mdcValueKind: .string("code")])
        let sent = observations(try bundle([.quantity(text), .quantity(attributes), .quantity(empty), .quantity(none), .quantity(oddCode)]))
        XCTAssertEqual(sent.count, 5)
        func profile(_ observation: [String: Any]) -> [String]? { (observation["meta"] as? [String: Any])?["profile"] as? [String] }
        XCTAssertEqual(profile(sent[0]), [PHDGuide.Profile.string.url])
        XCTAssertEqual(codes(sent[0]["code"], system: PHDGuide.mdcSystem), ["68218"])
        XCTAssertEqual(sent[0]["valueString"] as? String, "Test Strip Buckled")
        XCTAssertNil(sent[0]["valueQuantity"], "the text, not the count")
        XCTAssertEqual(profile(sent[1]), [PHDGuide.Profile.compound.url])
        XCTAssertNil(sent[1].keys.first { $0.hasPrefix("value") }, "value[x] ..0")
        let components = try XCTUnwrap(sent[1]["component"] as? [[String: Any]])
        XCTAssertEqual(components.map { codes($0["code"], system: PHDGuide.mdcSystem) }, [["68220"], ["68220"], ["68221"], ["68222"], ["68223"]])
        XCTAssertEqual(components.map { ($0["valueQuantity"] as? [String: Any])?["value"] as? Double }, [5, 2.5, nil, nil, nil])
        XCTAssertEqual((components[0]["valueQuantity"] as? [String: Any])?["code"] as? String, "1")
        XCTAssertEqual(components.map { $0["valueString"] as? String }, [nil, nil, "abc", "true", nil])
        XCTAssertNotNil(components[4]["dataAbsentReason"], "R4 has no empty string")
        for absent in [sent[2], sent[3]] {
            XCTAssertEqual(codes(absent["dataAbsentReason"], system: PHDGuide.dataAbsentReasonSystem), ["unknown"])
            XCTAssertNil(absent["valueString"])
            XCTAssertNil(absent["component"])
        }
        XCTAssertEqual(profile(sent[4]), [PHDGuide.Profile.numeric.url], "2.5 is no MDC code")
        XCTAssertEqual((sent[4]["valueQuantity"] as? [String: Any])?["value"] as? Double, 2.5)

        // `fhir-r4` sends the same content: the text, the attributes, the reason for neither.
        let r4 = PayloadBuilder(format: .fhirR4, patientReference: Self.patient)
        let plain = observations(try bundle([.quantity(text), .quantity(attributes), .quantity(empty)], builder: r4))
        XCTAssertEqual(plain.count, 3)
        XCTAssertEqual(plain[0]["valueString"] as? String, "Test Strip Buckled")
        XCTAssertNil(plain[0]["valueQuantity"])
        XCTAssertEqual((plain[1]["component"] as? [[String: Any]])?.map { $0["valueString"] as? String }, [nil, nil, "abc", "true", nil])
        XCTAssertNil(plain[1]["valueQuantity"])
        XCTAssertEqual(codes(plain[2]["dataAbsentReason"], system: PHDGuide.dataAbsentReasonSystem), ["unknown"])
    }

    /// The codes of one compound discrete observation become readings of one type and time
    /// stamp: the guide's identifier would make them one Observation, so only the first carries it.
    func testReadingsThatWouldShareTheGuideIdentifierAreNotMadeOne() throws {
        let events = try XCTUnwrap(QuantityType.named("mdc.8410608.512"))
        let metadata: Metadata = [.deviceTimestamp: .string("2026-12-01T10:00:00Z")]
        let first = try sample(events, 8_418_084, .count, metadata: metadata)
        let second = try sample(events, 8_418_086, .count, metadata: metadata)
        let sent = observations(try bundle([.quantity(first), .quantity(second)]))
        let systems = sent.map { ($0["identifier"] as? [[String: String]] ?? []).compactMap { $0["system"] } }
        XCTAssertEqual(systems, [[PHDGuide.observationIdentifierSystem, "urn:ietf:rfc:3986"], ["urn:ietf:rfc:3986"]])
    }

    // MARK: The gateway

    /// The PhgDevice carries what its profile's purpose says is "required to be reported": a
    /// system identifier (an EUI-64 derived from the machine's permanent MAC by inserting FF-FE,
    /// and the MAC itself as the transport address), the manufacturer and model of the software,
    /// and the time synchronization method (MDC_TIME_SYNC_PROTOCOL, 68220). A reading another
    /// gateway stamped names that gateway, of which none of this is known.
    func testTheGatewayHasItsSystemIdentifierManufacturerAndTimeSynchronization() throws {
        let facts = PHDGatewayFacts(hardwareAddress: "dc:a6:32:12:34:56", timeSync: .ntpv4)
        let builder = PayloadBuilder(format: .fhirPHD, patientReference: Self.patient, gatewayName: "clinic-north-3", gatewayFacts: facts)
        var elsewhere = Self.ghsMetadata
        elsewhere[.gatewayName] = .string("clinic-south-1")
        let bundle = try bundle(
            [.quantity(try sample(.oxygenSaturation, 97, .percent, metadata: Self.ghsMetadata)),
             .quantity(try sample(.oxygenSaturation, 96, .percent, metadata: elsewhere))],
            builder: builder)
        let gatewayEntries = entries(bundle).filter {
            (($0["resource"] as? [String: Any])?["meta"] as? [String: Any])?["profile"] as? [String] == [PHDGuide.Profile.phgDevice.url]
        }
        XCTAssertEqual(gatewayEntries.count, 2)
        let gateway = try XCTUnwrap(gatewayEntries[0]["resource"] as? [String: Any])
        let identifiers = try XCTUnwrap(gateway["identifier"] as? [[String: Any]])
        XCTAssertEqual(identifiers.map { $0["system"] as? String }, [
            "urn:oid:1.2.840.10004.1.1.1.0.0.1.0.0.1.2680", "http://hl7.org/fhir/sid/eui-48/ethernet", PHDDeviceMapping.gatewayIdentifierSystem,
        ])
        XCTAssertEqual(identifiers.map { $0["value"] as? String }, ["DC-A6-32-FF-FE-12-34-56", "DC-A6-32-12-34-56", "clinic-north-3"])
        XCTAssertEqual(identifiers.map { codes($0["type"], system: PHDGuide.deviceIdentifierTypeSystem) }, [["SYSID"], ["ETHMAC"], []])
        // Created unless the server holds it by any of them (one created by name earlier is kept).
        XCTAssertEqual(
            (gatewayEntries[0]["request"] as? [String: String])?["ifNoneExist"],
            "identifier=urn:oid:1.2.840.10004.1.1.1.0.0.1.0.0.1.2680|DC-A6-32-FF-FE-12-34-56,"
                + "http://hl7.org/fhir/sid/eui-48/ethernet|DC-A6-32-12-34-56,https://healthgate.dev/fhir/NamingSystem/gateway|clinic-north-3")
        XCTAssertEqual(gateway["manufacturer"] as? String, "healthgate project")
        XCTAssertEqual(gateway["modelNumber"] as? String, "healthgate")
        let property = try XCTUnwrap((gateway["property"] as? [[String: Any]])?.first)
        XCTAssertEqual(codes(property["type"], system: PHDGuide.mdcSystem), ["68220"])
        XCTAssertEqual((property["valueCode"] as? [Any])?.flatMap { codes($0, system: PHDGuide.mdcSystem) }, ["532226"])
        XCTAssertEqual(codings((property["valueCode"] as? [Any])?.first).first?["display"] as? String, "MDC_TIME_SYNC_NTPV4")
        // The other gateway: by its name, no time synchronization known.
        let other = try XCTUnwrap(gatewayEntries[1]["resource"] as? [String: Any])
        XCTAssertEqual((other["identifier"] as? [[String: Any]])?.map { $0["value"] as? String }, ["clinic-south-1"])
        XCTAssertNil(other["property"])
        // The facts are part of the key: another clock state or address is another request.
        XCTAssertNotEqual(builder.identity, PayloadBuilder(format: .fhirPHD, patientReference: Self.patient, gatewayName: "clinic-north-3").identity)
    }

    /// The kernel's word becomes the method: NTP's kernel discipline NTPv4, systemd-timesyncd's
    /// flag alone SNTP (RFC 4330), an unsynchronised or merely trusted clock none.
    func testTheTimeSynchronizationMethodFollowsTheClocksState() {
        XCTAssertEqual(PHDGatewayFacts.TimeSync(.synchronized(maximumErrorSeconds: 0.016)), .ntpv4)
        XCTAssertEqual(PHDGatewayFacts.TimeSync(.synchronized(maximumErrorSeconds: nil)), .sntpv4)
        XCTAssertEqual(PHDGatewayFacts.TimeSync(.unsynchronized), .none)
        XCTAssertEqual(PHDGatewayFacts.TimeSync(.declaredTrusted), .none)
        XCTAssertEqual([PHDGatewayFacts.TimeSync.ntpv4, .sntpv4, .none].map(\.code.code), [532_226, 532_228, 532_224])
        // An address that is none (all zeros, not six octets) is no identity.
        XCTAssertNil(PHDGatewayFacts(hardwareAddress: "00:00:00:00:00:00").systemIdentifier)
        XCTAssertNil(PHDGatewayFacts(hardwareAddress: "usb-1").systemIdentifier)
    }

    /// The permanent MAC is the first Ethernet-type interface's, by name, whose address the
    /// hardware gave it: not the loopback, not a random (privacy) address.
    func testThePermanentHardwareAddressIsReadFromSysfs() throws {
        let root = try TestEnvironment.temporaryDirectory("sysfs-net")
        defer { try? FileManager.default.removeItem(at: root) }
        func interface(_ name: String, type: String, assign: String, address: String) throws {
            let directory = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data((type + "\n").utf8).write(to: directory.appendingPathComponent("type"))
            try Data((assign + "\n").utf8).write(to: directory.appendingPathComponent("addr_assign_type"))
            try Data((address + "\n").utf8).write(to: directory.appendingPathComponent("address"))
        }
        XCTAssertNil(PermanentHardwareAddress.read(root: root.path))
        try interface("lo", type: "772", assign: "0", address: "00:00:00:00:00:00")
        try interface("eth0", type: "1", assign: "3", address: "2a:11:22:33:44:55")
        try interface("wlan0", type: "1", assign: "0", address: "dc:a6:32:12:34:56")
        XCTAssertEqual(PermanentHardwareAddress.read(root: root.path), "dc:a6:32:12:34:56")
    }

    // MARK: Heart rate

    /// A heart rate is coded by what measured it (ProfileConsumers.md: the cuff's pulse rate
    /// 149546, the oximeter's 149530): a cuff's MDC_PULS_RATE_NON_INV, an oximeter's
    /// MDC_PULS_OXIM_PULS_RATE, a strap's (a device of neither kind) MDC_ECG_HEART_RATE; each
    /// with LOINC 8867-4 and the vital-signs category. The code a GHS device sent wins.
    func testAHeartRateIsCodedByTheDeviceThatMeasuredIt() throws {
        let strap = Device(name: "Polar H10 A1B2C3D4", manufacturer: "Polar Electro Oy", localIdentifier: "C8:2F:3A:11:22:33")
        func heartRate(_ device: Device, _ metadata: Metadata) throws -> HealthRecord {
            .quantity(try sample(.heartRate, 64, .countPerMinute, device: device, metadata: metadata))
        }
        let cuff = try heartRate(Self.scale, [.mdcDeviceSpecializations: .string(MDCDeviceSpecialization.bloodPressure.listed)])
        let oximeter = try heartRate(Self.oximeter, [.mdcDeviceSpecializations: .string(MDCDeviceSpecialization.pulseOximeter.listed)])
        let chest = try heartRate(strap, [:])
        let sent = try heartRate(Self.oximeter, [.mdcObservationType: .integer(149_546), .mdcDeviceSpecializations: .string("4100:1")])
        let observations = observations(try bundle([cuff, oximeter, chest, sent]))
        XCTAssertEqual(observations.map { codes($0["code"], system: PHDGuide.mdcSystem) }, [["149546"], ["149530"], ["147842"], ["149546"]])
        XCTAssertEqual(
            observations.map { codings($0["code"]).first?["display"] as? String },
            ["MDC_PULS_RATE_NON_INV", "MDC_PULS_OXIM_PULS_RATE", "MDC_ECG_HEART_RATE", "MDC_PULS_RATE_NON_INV"])
        for observation in observations {
            XCTAssertEqual(codes(observation["code"], system: "http://loinc.org"), ["8867-4"])
            let categories = (observation["category"] as? [Any] ?? []).flatMap { codes($0, system: "http://terminology.hl7.org/CodeSystem/observation-category") }
            XCTAssertEqual(categories, ["vital-signs"])
        }
    }

    /// A strap's heart-rate series on a regular grid is a PhdRtsaObservation with LOINC 8867-4
    /// in its code (the guide: "If it is a vital sign, the same FHIR-required LOINC code
    /// requirements apply"), but no vital-signs category: R4's heart-rate profile takes only a
    /// valueQuantity, and the guide's examples put the category only on one.
    func testAStrapsHeartRateSeriesCarriesItsLOINCCodeButNotTheVitalSignsCategory() throws {
        let strap = Device(name: "Polar H10 A1B2C3D4", manufacturer: "Polar Electro Oy", localIdentifier: "C8:2F:3A:11:22:33")
        let series = try QuantitySeriesSample(
            id: SampleID(UUID()), type: .heartRate, unit: .countPerMinute,
            quantities: [71.0, 72, 72, 74].enumerated().map { index, value in
                let at = Self.epoch.addingTimeInterval(Double(index))
                return SeriesQuantity(value: value, start: at, end: at)
            },
            device: strap)
        let observation = try XCTUnwrap(observations(try bundle([.quantitySeries(series)])).first)
        XCTAssertEqual((observation["meta"] as? [String: Any])?["profile"] as? [String], [PHDGuide.Profile.rtsa.url])
        XCTAssertEqual(codes(observation["code"], system: PHDGuide.mdcSystem), ["147842"])
        XCTAssertEqual(codes(observation["code"], system: "http://loinc.org"), ["8867-4"])
        XCTAssertEqual((observation["valueSampledData"] as? [String: Any])?["data"] as? String, "71 72 72 74")
        let categories = (observation["category"] as? [Any] ?? []).flatMap { codings($0) }.compactMap { $0["code"] as? String }
        XCTAssertEqual(categories, ["phd"])
    }

    // MARK: Coincident time stamp

    /// A cuff whose clock ran 90 s fast: the gateway corrected its readings by −90 s, so each
    /// refers to the guide's Coincident Time Stamp Observation (the device's time against the
    /// gateway's), one for the device's time base however many readings share it, the same in
    /// every batch.
    func testAReadingTheGatewayCorrectedRefersToOneCoincidentTimeStampPerTimeBase() throws {
        // What the Blood Pressure and Weight Scale profiles' mapper writes: the stamp as the device
        // stated it (local time, offset unknown); the reading's time is 90 s earlier.
        func corrected(stated: String) -> Metadata { [.deviceTimestamp: .string(stated)] }
        let pressure = try bloodPressure(metadata: corrected(stated: "2027-01-15T08:01:30-00:00"))
        let weight = try QuantitySample(
            id: SampleID(UUID()), type: .bodyMass, quantity: Quantity(72.4, .kilogram), start: Self.epoch.addingTimeInterval(60),
            end: Self.epoch.addingTimeInterval(60), device: Self.scale, metadata: corrected(stated: "2027-01-15T08:02:30-00:00"))
        let bundle = try bundle([.correlation(pressure), .quantity(weight)])
        let stamps = coincidentTimeStamps(bundle)
        XCTAssertEqual(stamps.count, 1, "one per time base")
        let stamp = try XCTUnwrap(stamps.first)
        XCTAssertEqual(stamp["status"] as? String, "final")
        XCTAssertEqual(codes(stamp["code"], system: PHDGuide.mdcSystem), ["67975"])
        XCTAssertEqual(codings(stamp["code"]).first?["display"] as? String, "MDC_ATTR_TIME_ABS")
        // The gateway's time and the device's at the same moment: the first reading's.
        XCTAssertEqual(stamp["effectiveDateTime"] as? String, RFC3339.string(from: Self.epoch))
        XCTAssertEqual(stamp["valueDateTime"] as? String, "2027-01-15T08:01:30-00:00")
        let sent = observations(bundle)
        let device = try XCTUnwrap(reference(sent[0]["device"]))
        XCTAssertEqual(reference(stamp["subject"]), device, "the PhdDevice")
        let gateway = (sent[0]["extension"] as? [[String: Any]])?.first { $0["url"] as? String == PHDGuide.gatewayDeviceExtension }
        XCTAssertEqual(reference(stamp["device"]), reference(gateway?["valueReference"]), "the PhgDevice")
        let stampEntry = try XCTUnwrap(entries(bundle).first { ($0["resource"] as? [String: Any]).map(profiles) == [PHDGuide.Profile.coincidentTimeStamp.url] })
        XCTAssertEqual(sent.map(coincidentReference), [stampEntry["fullUrl"] as? String, stampEntry["fullUrl"] as? String])
        XCTAssertEqual(
            (stamp["identifier"] as? [[String: String]])?.first,
            ["system": "https://healthgate.dev/fhir/NamingSystem/coincident-time-stamp", "value": "A0-9E-1A-12-34-56/67975/-90000"])
        XCTAssertEqual(
            (stampEntry["request"] as? [String: String])?["ifNoneExist"],
            "identifier=https://healthgate.dev/fhir/NamingSystem/coincident-time-stamp|A0-9E-1A-12-34-56/67975/-90000")
        // Another batch on the same time base names the same one: the server keeps the first.
        let later = try self.bundle([.quantity(weight)])
        XCTAssertEqual(coincidentReference(observations(later)[0]), stampEntry["fullUrl"] as? String)
    }

    /// A time the gateway took as the device stated it has no coincident time stamp ("the PHG
    /// determined that the PHD timestamp is reliable and can be used as is"), nor has a reading
    /// without a device time stamp: a GHS reading placed at its own time stamp, however its text
    /// rounds (the +1 ms of #78: .132 stored, .131 written), and a strap's heart rate.
    func testATimeTakenAsTheDeviceStatedItHasNoCoincidentTimeStamp() throws {
        var ghs = Self.ghsMetadata
        ghs[.deviceTimestamp] = .string("2027-01-15T08:00:00.131Z")
        let placed = try QuantitySample(
            id: SampleID(UUID()), type: .oxygenSaturation, quantity: Quantity(97, .percent), start: Self.epoch.addingTimeInterval(0.132),
            end: Self.epoch.addingTimeInterval(0.132), device: Self.oximeter, metadata: ghs)
        let live = try sample(.heartRate, 64, .countPerMinute, device: Device(localIdentifier: "C8:2F:3A:11:22:33"))
        let bundle = try bundle([.quantity(placed), .quantity(live)])
        XCTAssertEqual(coincidentTimeStamps(bundle).count, 0)
        XCTAssertEqual(observations(bundle).map(coincidentReference), [nil, nil])
    }

    /// A live GHS reading placed at its reception: a tick counter's pairs the reception with the
    /// counter in microseconds (MDC_ATTR_TIME_REL); local time without its offset is the device's
    /// time as stated, `-00:00` (offset unknown), as FHIR's dateTime needs one.
    func testAReadingPlacedAtItsReceptionPairsTheReceptionWithTheDevicesTime() throws {
        let ticks = try sample(.oxygenSaturation, 97, .percent, metadata: [.deviceTimestamp: .string("ticks:12345678@0.001")])
        let local = try sample(.oxygenSaturation, 96, .percent, metadata: [.deviceTimestamp: .string("2027-01-15T09:00:00.250")])
        let stamps = coincidentTimeStamps(try bundle([.quantity(ticks), .quantity(local)]))
        XCTAssertEqual(stamps.map { codes($0["code"], system: PHDGuide.mdcSystem) }, [["67983"], ["67975"]])
        let counter = try XCTUnwrap(stamps[0]["valueQuantity"] as? [String: Any])
        XCTAssertEqual(counter["value"] as? Double, 12_345_678_000)
        XCTAssertEqual(counter["code"] as? String, "us")
        XCTAssertEqual(counter["system"] as? String, "http://unitsofmeasure.org")
        XCTAssertNil(stamps[0]["valueDateTime"])
        XCTAssertEqual(stamps[1]["valueDateTime"] as? String, "2027-01-15T09:00:00.250-00:00")
        XCTAssertEqual(stamps.map { $0["effectiveDateTime"] as? String }, Array(repeating: RFC3339.string(from: Self.epoch), count: 2))
        XCTAssertEqual((stamps[1]["identifier"] as? [[String: String]])?.first?["value"], "00-1C-05-FF-E8-74/67975/-3600250")
    }

    // MARK: Measurement status

    /// StructureDefinition-PhdBaseObservation-notes.md, "Measurement Status": invalid is no
    /// value, data absent (error) and entered-in-error.
    func testAnInvalidReadingCarriesNoValueButTheReasonAndEnteredInError() throws {
        var metadata = Self.ghsMetadata
        metadata[.mdcMeasurementStatus] = .integer(1)
        let spo2 = try sample(.oxygenSaturation, 97, .percent, metadata: metadata)
        let observation = try XCTUnwrap(observations(try bundle([.quantity(spo2)])).first)
        XCTAssertEqual(observation["status"] as? String, "entered-in-error")
        XCTAssertNil(observation["valueQuantity"])
        XCTAssertEqual(codes(observation["dataAbsentReason"], system: "http://terminology.hl7.org/CodeSystem/data-absent-reason"), ["error"])
    }

    func testTheOtherStatusBitsBecomeInterpretationsSecurityAndNotes() throws {
        // questionable (1), test data (4), early estimate (5), manually entered (6), threshold error (14)
        var metadata = Self.ghsMetadata
        metadata[.mdcMeasurementStatus] = .integer(1 << 1 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 14)
        let spo2 = try sample(.oxygenSaturation, 97, .percent, metadata: metadata)
        let observation = try XCTUnwrap(observations(try bundle([.quantity(spo2)])).first)
        XCTAssertEqual(observation["status"] as? String, "preliminary")
        XCTAssertNotNil(observation["valueQuantity"])
        let interpretations = (observation["interpretation"] as? [Any] ?? []).map { codes($0, system: PHDGuide.measurementStatusSystem) }
        XCTAssertEqual(interpretations, [["questionable"], ["early-indication"], ["in-alarm"]], "one coding each (MsmtStatusInterpretation 1..1)")
        let security = ((observation["meta"] as? [String: Any])?["security"] as? [[String: String]])?.first
        XCTAssertEqual(security, ["system": "http://terminology.hl7.org/CodeSystem/v3-ActReason", "code": "HTEST"])
        XCTAssertEqual((observation["note"] as? [[String: String]])?.count, 2)
        // Not available: no value, not performed.
        metadata[.mdcMeasurementStatus] = .string("4")
        let missing = try XCTUnwrap(observations(try bundle([.quantity(try sample(.oxygenSaturation, 97, .percent, metadata: metadata))])).first)
        XCTAssertNil(missing["valueQuantity"])
        XCTAssertEqual(codes(missing["dataAbsentReason"], system: "http://terminology.hl7.org/CodeSystem/data-absent-reason"), ["not-performed"])
        XCTAssertEqual(missing["status"] as? String, "final")
    }

    // MARK: Blood pressure

    func bloodPressure(metadata: Metadata = [:], memberMetadata: Metadata = [:]) throws -> CorrelationSample {
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(
                id: SampleID(UUID()), type: type, quantity: Quantity(value, .millimeterOfMercury), start: Self.epoch, end: Self.epoch,
                device: Self.scale, metadata: memberMetadata)
        }
        return try .bloodPressure(
            id: SampleID(UUID()), systolic: member(.bloodPressureSystolic, 128), diastolic: member(.bloodPressureDiastolic, 82),
            device: Self.scale, metadata: metadata)
    }

    /// A blood-pressure correlation is one PhdCompoundNumericObservation, as
    /// input/examples/compound-numeric-blood-pressure.json: MDC_PRESS_BLD_NONINV with the
    /// panel's LOINC code, systolic, diastolic and the mean from the reading's metadata.
    func testABloodPressureIsACompoundWithSystolicDiastolicAndTheMean() throws {
        let reading = try bloodPressure(metadata: [.meanArterialPressure: .double(97.3), .deviceTimestamp: .string("2026-11-23T06:30:09-00:00")])
        let observation = try XCTUnwrap(observations(try bundle([.correlation(reading)])).first)
        XCTAssertEqual((observation["meta"] as? [String: Any])?["profile"] as? [String], [PHDGuide.Profile.compoundNumeric.url])
        XCTAssertEqual(codes(observation["code"], system: PHDGuide.mdcSystem), ["150020"])
        XCTAssertEqual(codes(observation["code"], system: "http://loinc.org"), ["85354-9"])
        XCTAssertNil(observation["valueQuantity"], "value[x] ..0")
        let components = try XCTUnwrap(observation["component"] as? [[String: Any]])
        XCTAssertEqual(components.map { codes($0["code"], system: PHDGuide.mdcSystem) }, [["150021"], ["150022"], ["150023"]])
        XCTAssertEqual(components.map { codes($0["code"], system: "http://loinc.org") }, [["8480-6"], ["8462-4"], []])
        let values = components.map { $0["valueQuantity"] as? [String: Any] ?? [:] }
        XCTAssertEqual(values.map { $0["value"] as? Double }, [128, 82, 97.3])
        XCTAssertEqual(values.map { $0["code"] as? String }, ["mm[Hg]", "mm[Hg]", "mm[Hg]"])
        XCTAssertEqual(
            (observation["identifier"] as? [[String: String]])?.first?["value"], "A09E1A123456-example-150020-848730609")
        // Without a mean, two components; a cuff that sent kPa has its members in kPa.
        let kilopascal: Metadata = [.mdcUnit: .integer(3843)]
        let other = try bloodPressure(memberMetadata: kilopascal)
        let compound = try XCTUnwrap(observations(try bundle([.correlation(other)])).first)
        let parts = try XCTUnwrap(compound["component"] as? [[String: Any]])
        XCTAssertEqual(parts.count, 2)
        XCTAssertEqual((parts[0]["valueQuantity"] as? [String: Any])?["code"] as? String, "kPa")
        XCTAssertEqual((parts[0]["valueQuantity"] as? [String: Any])?["value"] as? Double ?? 0, 128 * 0.133322387415, accuracy: 1e-6)
    }

    // MARK: Series

    /// An ECG lead from a GHS sample array (MDC_ECG_ELEC_POTL_II in mV, 250 Hz) is one
    /// PhdRtsaObservation: SampledData with the period, origin 0 and factor 1.
    func testAnECGLeadIsASampledDataObservation() throws {
        let lead = try XCTUnwrap(QuantityType.named("mdc.131330.4274"))
        let values = [0.12, 0.35, 1.2, -0.4, 0.05, 0.0, 0.1, 0.08]
        let series = try QuantitySeriesSample(
            id: SampleID(UUID()), type: lead, unit: .millivolt,
            quantities: values.enumerated().map { index, value in
                let at = Self.epoch.addingTimeInterval(Double(index) * 0.004)
                return SeriesQuantity(value: value, start: at, end: at)
            },
            device: Self.oximeter, metadata: [.mdcUnit: .integer(4274), .deviceTimestamp: .string("2026-12-01T10:00:00.000Z")])
        let observation = try XCTUnwrap(observations(try bundle([.quantitySeries(series)])).first)
        XCTAssertEqual((observation["meta"] as? [String: Any])?["profile"] as? [String], [PHDGuide.Profile.rtsa.url])
        XCTAssertEqual(codes(observation["code"], system: PHDGuide.mdcSystem), ["131330"])
        XCTAssertEqual(codes(observation["code"], system: "http://loinc.org"), [])
        let sampled = try XCTUnwrap(observation["valueSampledData"] as? [String: Any])
        XCTAssertEqual(sampled["data"] as? String, "0.12 0.35 1.2 -0.4 0.05 0 0.1 0.08")
        XCTAssertEqual(sampled["period"] as? Double, 4)
        XCTAssertEqual(sampled["factor"] as? Double, 1)
        XCTAssertEqual(sampled["dimensions"] as? Double, 1)
        let origin = try XCTUnwrap(sampled["origin"] as? [String: Any])
        XCTAssertEqual(origin["value"] as? Double, 0)
        XCTAssertEqual(origin["code"] as? String, "mV")
        XCTAssertEqual(origin["system"] as? String, "http://unitsofmeasure.org")
        let period = try XCTUnwrap(observation["effectivePeriod"] as? [String: String])
        XCTAssertEqual(period["start"], RFC3339.string(from: series.startDate))
        XCTAssertEqual(period["end"], RFC3339.string(from: series.endDate))
        XCTAssertEqual((observation["identifier"] as? [[String: String]])?.first?["value"], "001C05FFE874-example-131330-849434400.000")
    }

    /// A series with a gap (a grid point no quantity took) goes as its quantities: the guide's
    /// SampledData has no `E`. An open series is not sent at all.
    func testASeriesWithAGapGoesAsItsQuantitiesAndAnOpenOneNotAtAll() throws {
        let starts = [0.0, 1, 2, 4]
        let series = try QuantitySeriesSample(
            id: SampleID(UUID()), type: .heartRate, unit: .countPerMinute,
            quantities: starts.map { SeriesQuantity(value: 70 + $0, start: Self.epoch.addingTimeInterval($0), end: Self.epoch.addingTimeInterval($0)) },
            device: Self.oximeter)
        let sent = observations(try bundle([.quantitySeries(series)]))
        XCTAssertEqual(sent.count, 4)
        XCTAssertEqual(sent.map { (($0["valueQuantity"] as? [String: Any])?["value"] as? Double) }, [70, 71, 72, 74])
        XCTAssertEqual(sent.map { ($0["meta"] as? [String: Any])?["profile"] as? [String] }, Array(repeating: [PHDGuide.Profile.numeric.url], count: 4))
        let tags = sent.map { (($0["meta"] as? [String: Any])?["tag"] as? [[String: String]])?.first?["code"] }
        XCTAssertEqual(tags, Array(repeating: series.id.uuidString, count: 4))
        XCTAssertEqual(
            sent.map { ($0["identifier"] as? [[String: String]])?.first?["value"] },
            (0..<4).map { "urn:uuid:\(SampleID(quantity: $0, ofSeries: series.id).uuidString)" })

        var open = series.metadata
        open[.provisional] = .bool(true)
        let growing = try QuantitySeriesSample(id: series.id, type: .heartRate, unit: .countPerMinute, quantities: series.quantities, device: Self.oximeter, metadata: open)
        XCTAssertFalse(builder.accepts(.stored(.quantitySeries(growing), anchor: 1)))
    }

    // MARK: What is not sent, and deletions

    func testWhatTheFormHasNoCodeOrDeviceForIsLeftOutAndReported() throws {
        let steps = try sample(.stepCount, 120, .count, seconds: 60)
        let anonymous = try sample(.oxygenSaturation, 95, .percent, device: nil)
        let spo2 = try sample(.oxygenSaturation, 97, .percent)
        let untyped = try sample(MDCNomenclature.genericType(observation: MDCNomenclature.untypedObservation, unit: 512), 1, .count)
        let records: [HealthRecord] = [.quantity(steps), .quantity(anonymous), .quantity(spo2), .quantity(untyped)]
        let changes = records.enumerated().map { FollowedChange.stored($1, anchor: Int64($0 + 1)) }
        XCTAssertTrue(changes.allSatisfy(builder.accepts), "taken, so that the sink counts them")
        let payload = try builder.payload(for: FollowerBatch(after: 0, through: 4, changes: changes, payloadIdentity: builder.identity))
        XCTAssertEqual(payload.leftOut, [
            "stepCount: the MDC table has no IEEE 11073-10101 code for its type",
            "oxygenSaturation: it names no device (a PHD Observation requires one)",
            "mdc.0.512: the device sent no observation type (a PHD Observation is coded by it)",
        ])
        let body = try XCTUnwrap(payload.body)
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        XCTAssertEqual(observations(bundle).count, 1)
        // A batch of nothing it can send has no body.
        let none = try builder.payload(for: FollowerBatch(after: 0, through: 1, changes: [changes[0]], payloadIdentity: builder.identity))
        XCTAssertNil(none.body)
        // Heartbeat series and workouts have no form here; a deletion of a type never sent is not taken.
        XCTAssertFalse(builder.accepts(.deleted(.init(id: steps.id, kind: .quantity, type: "stepCount", anchor: 4))))
        XCTAssertFalse(builder.accepts(.deleted(.init(id: steps.id, kind: .heartbeatSeries, type: "heartbeatSeries", anchor: 4))))
    }

    /// A deletion is a conditional delete by the uuid identifier (R4 §3.1.0.7.1); a series' also
    /// deletes the Observations of its quantities, by its tag.
    func testDeletionsAreConditionalDeletesByIdentifier() throws {
        let spo2 = try sample(.oxygenSaturation, 97, .percent)
        let series = SampleID(UUID())
        let bundle = try bundle(
            [.quantity(spo2)],
            deletions: [
                .init(id: spo2.id, kind: .quantity, type: "oxygenSaturation", anchor: 2),
                .init(id: series, kind: .quantitySeries, type: "heartRate", anchor: 3),
            ])
        let deletes = entries(bundle).compactMap { $0["request"] as? [String: String] }.filter { $0["method"] == "DELETE" }
        XCTAssertEqual(deletes.map { $0["url"] ?? "" }, [
            "Observation?identifier=urn:ietf:rfc:3986|urn:uuid:\(spo2.id.uuidString)",
            "Observation?identifier=urn:ietf:rfc:3986|urn:uuid:\(series.uuidString)",
            "Observation?_tag=https://healthgate.dev/fhir/CodeSystem/quantity-series|\(series.uuidString)",
        ])
    }

    // MARK: The identifier's time stamp

    /// GeneratingtheTimeStampPartIdentifier.md: seconds since 2000 at the clock's resolution,
    /// the offset in quarter hours, `..` and the duration. (Its example writes 690897360.567 for
    /// 2021-11-22 11:56:30.567, 30 s off the count; 690897390 is 2021-11-22T11:56:30 − 2000-01-01.)
    func testTheTimeStampPartOfTheIdentifier() {
        XCTAssertEqual(PHDObservationIdentifier.timestampPart("2021-11-22T11:56:30.567Z", duration: nil), "690897390.567")
        XCTAssertEqual(PHDObservationIdentifier.timestampPart("2021-11-22T12:56:30.567+01:00", duration: nil), "690900990.567+4")
        XCTAssertEqual(PHDObservationIdentifier.timestampPart("2021-11-22T12:56:30.567+01:00", duration: 1), "690900990.567+4..1.000")
        XCTAssertEqual(PHDObservationIdentifier.timestampPart("2021-11-22T06:26:30-05:30", duration: 90), "690877590-22..90")
        XCTAssertEqual(PHDObservationIdentifier.timestampPart("2021-11-22T11:56:30-00:00", duration: nil), "690897390")
        XCTAssertEqual(PHDObservationIdentifier.timestampPart("2021-11-22T11:56:30.567", duration: nil), "690897390.567")
        XCTAssertEqual(PHDObservationIdentifier.timestampPart("ticks:12345678@0.001", duration: nil), "12345.678")
        XCTAssertNil(PHDObservationIdentifier.timestampPart("1999-12-31T23:59:59Z", duration: nil))
        XCTAssertNil(PHDObservationIdentifier.timestampPart("yesterday", duration: nil))
        // Without a device time stamp or an address there is no guide identifier.
        XCTAssertNil(PHDObservationIdentifier.value(device: Self.oximeter, patient: Self.patient, type: 150_456, metadata: [:]))
        XCTAssertNil(PHDObservationIdentifier.value(
            device: Device(localIdentifier: "usb-Omron_HEM-7600"), patient: Self.patient, type: 150_456, metadata: Self.ghsMetadata))
    }

    // MARK: Configuration

    func testFHIRPHDNeedsASubjectAndItsSettingsAreInTheKey() throws {
        let directory = try TestEnvironment.temporaryDirectory("phd-config")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = TestEnvironment.make(directory: directory)
        let configuration = HTTPRepositoryConfiguration(url: "https://fhir.example/r4").with { $0.format = .fhirPHD }
        XCTAssertThrowsError(try configuration.validated(in: environment)) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "patientReference")
            XCTAssertTrue("\(error)".contains("fhir-phd needs a subject"), "\(error)")
        }
        XCTAssertThrowsError(try configuration.with { $0.patientReference = "Practitioner/1" }.validated(in: environment))
        XCTAssertNoThrow(try configuration.with { $0.patientReference = "Patient/1" }.validated(in: environment))
        let decoded = try ConfigurationJSONParser.parse(Data(#"{"url": "https://fhir.example/r4", "format": "fhir-phd"}"#.utf8))
            .decodeStrictly(HTTPRepositoryConfiguration.self)
        XCTAssertEqual(decoded.format, .fhirPHD)

        let identities = [
            PayloadBuilder(format: .fhirR4, patientReference: "Patient/p").identity,
            PayloadBuilder(format: .fhirPHD, patientReference: "Patient/p").identity,
            PayloadBuilder(format: .fhirPHD, patientReference: "Patient/p", gatewayName: "other").identity,
            PayloadBuilder(format: .fhirPHD, patientReference: "Patient/q").identity,
            PayloadBuilder(format: .fhirPHD, patientReference: "Patient/p", quantitySeries: .expand).identity,
        ]
        XCTAssertEqual(Set(identities).count, identities.count, "\(identities)")
        XCTAssertEqual(builder.contentType, "application/fhir+json")
    }

    /// The same changes give the same Bundle, byte for byte: a retried batch is the same request.
    func testTheSameBatchIsTheSameBody() throws {
        let records: [HealthRecord] = [.quantity(try sample(.oxygenSaturation, 97, .percent, metadata: Self.ghsMetadata)), .correlation(try bloodPressure())]
        let changes = records.enumerated().map { FollowedChange.stored($1, anchor: Int64($0 + 1)) }
        let batch = FollowerBatch(after: 0, through: 2, changes: changes, payloadIdentity: builder.identity)
        XCTAssertEqual(try builder.body(for: batch), try builder.body(for: batch))
    }
}

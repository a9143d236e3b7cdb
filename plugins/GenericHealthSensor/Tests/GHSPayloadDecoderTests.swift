import BLETesting
import Foundation
import GATTDecoding
import GenericHealthSensor
import SampleBus
import XCTest

/// `healthgate decode`'s GHS decoders: their examples decode, and the JSON they print.
final class GHSPayloadDecoderTests: XCTestCase {
    func testDecodersAndTheirExamples() throws {
        XCTAssertEqual(GHSPayloadDecoders.all.map(\.name), ["ghs-observation", "ghs-features", "ghs-schedule"])
        for decoder in GHSPayloadDecoders.all {
            let hex = try XCTUnwrap(decoder.example.split(separator: " ").last)
            XCTAssertTrue(decoder.example.hasPrefix("healthgate decode \(decoder.name) "), decoder.name)
            XCTAssertNoThrow(try decoder.decode(HexPayload.parse(String(hex))), decoder.name)
        }
    }

    /// NumericOxygenSaturation: every key, absent ones null, no `sampleType` without a namer.
    func testNumericObservationJSON() throws {
        let json = try object(GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.numericOxygenSaturation)))
        XCTAssertEqual(json["class"] as? String, "numeric")
        XCTAssertEqual(json["classCode"] as? Int, 1)
        XCTAssertEqual(json["lengthCounts"] as? String, "afterLengthField")
        XCTAssertEqual(json["type"] as? Int, 150_456)
        XCTAssertEqual(json["flags"] as? [String], ["observationType", "timestamp", "patient", "supplementalInformation"])
        XCTAssertEqual(json["patient"] as? Int, 1)
        XCTAssertEqual(json["supplementalInformation"] as? [Int], [150_588])
        XCTAssertEqual(json["unit"] as? Int, 544)
        XCTAssertEqual(json["value"] as? Double, 98)
        for key in ["measurementDurationSeconds", "measurementStatus", "objectId", "derivedFrom", "isMemberOf", "tlvs"] {
            XCTAssertTrue(json[key] is NSNull, key)
        }
        XCTAssertNil(json["sampleType"])
        let timestamp = try XCTUnwrap(json["timestamp"] as? [String: Any])
        XCTAssertEqual(timestamp["tickCounter"] as? Bool, false)
        XCTAssertEqual(timestamp["utc"] as? Bool, true)
        XCTAssertEqual(timestamp["resolutionSeconds"] as? Double, 1)
        XCTAssertEqual(timestamp["value"] as? Int, 690_724_210)
        XCTAssertEqual(timestamp["secondsSince2000"] as? Double, 690_724_210)
        XCTAssertEqual(timestamp["timeSource"] as? String, "cellularNetwork")
        XCTAssertTrue(timestamp["offsetMinutes"] is NSNull)
        XCTAssertEqual(timestamp["currentTimeline"] as? Bool, true)
    }

    /// The hook for the mapping: a `sampleType` key on every object with a type and on every
    /// compound component, with what the namer returns.
    func testSampleTypeHook() throws {
        let namer: GHSObservationReport.SampleTypeNamer = { type, unit in
            switch (type, unit) {
            case (150_456, 544?): "oxygenSaturation"
            case (149_530, 2720?): "heartRate"
            case (150_021, 3872?): "bloodPressureSystolic"
            default: nil
            }
        }
        let bundle = try object(
            GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.observationBundle), sampleType: namer))
        XCTAssertTrue(bundle["sampleType"] is NSNull, "a bundle has no type")
        let members = try XCTUnwrap(bundle["members"] as? [[String: Any]])
        XCTAssertEqual(members.map { $0["sampleType"] as? String }, ["oxygenSaturation", "heartRate"])
        XCTAssertEqual(members.map { $0["lengthCounts"] as? String }, ["afterLengthField", "afterLengthField"])
        XCTAssertEqual(members.map { $0["value"] as? Double }, [98, 98])
        XCTAssertTrue(members[0]["timestamp"] is NSNull)

        let pressure = try object(
            GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.compoundObservationBloodPressure), sampleType: namer)
        )
        XCTAssertTrue(pressure["sampleType"] is NSNull)
        XCTAssertEqual(pressure["objectId"] as? Int, 123_456)
        let values = try XCTUnwrap(pressure["values"] as? [[String: Any]])
        XCTAssertEqual(values.map { $0["type"] as? Int }, [150_021, 150_022, 150_023])
        XCTAssertEqual(values.map { $0["unit"] as? Int }, [3872, 3872, 3872])
        XCTAssertEqual(values.map { $0["value"] as? Double }, [100, 60, 80])
        XCTAssertEqual(values[0]["sampleType"] as? String, "bloodPressureSystolic")
        XCTAssertTrue(values[1]["sampleType"] is NSNull)
    }

    /// The value keys of the other classes.
    func testValueKeysByClass() throws {
        let samples = try object(GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.sampleArrayObservation)))
        XCTAssertEqual(samples["unit"] as? Int, 4274)
        XCTAssertEqual((samples["samples"] as? [Double])?.prefix(2), [2048 + 1612 * 249, 2048 + 1612 * 7])
        XCTAssertEqual(samples["scaleFactor"] as? Double, 1612)
        XCTAssertEqual(samples["offset"] as? Double, 2048)
        XCTAssertEqual(samples["samplePeriodSeconds"] as? Double, 0.01)
        XCTAssertEqual(samples["samplesPerPeriod"] as? Int, 1)
        XCTAssertEqual(samples["bytesPerSample"] as? Int, 1)

        let states = try object(GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.compoundDiscreteEvent)))
        XCTAssertEqual(states["class"] as? String, "compoundStateEvent")
        XCTAssertEqual(states["supportedMask"] as? String, "FFFFFFFF")
        XCTAssertEqual(states["stateMask"] as? String, "FFFFFFFF")
        XCTAssertEqual(states["value"] as? String, "F0000300")
        XCTAssertEqual(states["derivedFrom"] as? [Int], [123_456])

        let codes = try object(
            GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.compoundDiscreteBloodPressureStatus)))
        XCTAssertEqual(codes["codes"] as? [Int], [196_848, 197_038])
        XCTAssertEqual(codes["type"] as? Int, 8_410_608)

        let text = try object(GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.stringObservation)))
        XCTAssertEqual(text["string"] as? String, "Man")
        XCTAssertTrue(text["type"] is NSNull)
        XCTAssertEqual(text["flags"] as? [String], [])

        let discrete = try object(GHSObservationReport(try GHSObservationDecoder.decode(STFixtures.simpleDiscreteObservation)))
        XCTAssertEqual(discrete["value"] as? Int, 98)

        let tlv = try object(
            GHSObservationReport(
                try GHSObservationDecoder.decode(
                    STFixtures.wholeObjectLengths(STFixtures.tlvEncodedObservation, memberOffsets: []))))
        XCTAssertEqual(tlv["lengthCounts"] as? String, "wholeObject")
        let entries = try XCTUnwrap(tlv["entries"] as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["type"] as? Int }, [150_456, 150_456, 150_456])
        XCTAssertEqual(entries.map { $0["format"] as? Int }, [4, 4, 4])
        XCTAssertEqual(entries.map { $0["formatName"] as? String }, ["uint8", "uint8", "uint8"])
        XCTAssertEqual(entries.map { $0["bytes"] as? String }, ["620000", "630000", "640000"])
        XCTAssertTrue(entries[0]["value"] is NSNull)
    }

    /// Every fixture prints, in both conventions.
    func testEveryFixturePrints() throws {
        for fixture in STFixtures.valid {
            for bytes in [fixture.bytes, STFixtures.wholeObjectLengths(fixture.bytes, memberOffsets: fixture.memberOffsets)] {
                let decoder = try XCTUnwrap(GHSPayloadDecoders.all.first)
                XCTAssertNoThrow(try JSONEncoder().encode(AnyReport(report: try decoder.decode(bytes))), fixture.name)
            }
        }
    }

    func testFeaturesAndScheduleJSON() throws {
        let decoders = Dictionary(uniqueKeysWithValues: GHSPayloadDecoders.all.map { ($0.name, $0) })
        let features = try object(
            AnyReport(report: try XCTUnwrap(decoders["ghs-features"]).decode(hexBytes("0102B84B02001A48020001071001"))))
        XCTAssertEqual(features["supportedObservationTypes"] as? [Int], [150_456, 149_530])
        let specializations = try XCTUnwrap(features["deviceSpecializations"] as? [[String: Any]])
        XCTAssertEqual(specializations.first?["termCode"] as? Int, 4103)
        XCTAssertEqual(specializations.first?["mdcCode"] as? Int, 528_391)
        XCTAssertEqual(specializations.first?["version"] as? Int, 1)
        let none = try object(AnyReport(report: try XCTUnwrap(decoders["ghs-features"]).decode(hexBytes("0000"))))
        XCTAssertTrue(none["deviceSpecializations"] is NSNull)
        let schedule = try object(
            AnyReport(report: try XCTUnwrap(decoders["ghs-schedule"]).decode(hexBytes("B84B02000A0000FF0A0000FF"))))
        XCTAssertEqual(schedule["type"] as? Int, 150_456)
        XCTAssertEqual(schedule["measurementPeriodSeconds"] as? Double, 1)
        XCTAssertEqual(schedule["updateIntervalSeconds"] as? Double, 1)
        XCTAssertThrowsError(try XCTUnwrap(decoders["ghs-observation"]).decode(STFixtures.simpleArrayECGWaveform)) { error in
            XCTAssertEqual((error as? GHSDecodingError)?.code, .lengthMismatch)
        }
    }

    private struct AnyReport: Encodable {
        let report: any Encodable
        func encode(to encoder: any Encoder) throws { try report.encode(to: encoder) }
    }

    private func object(_ report: some Encodable) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
    }
}

import BLETesting
import GATTDecoding
import GenericHealthSensor
import XCTest

/// The observation decoder against STMicroelectronics' GHS sample objects, in its length
/// convention and in Philips', and against every way an object can be malformed.
final class GHSObservationDecoderTests: XCTestCase {
    /// Every consistent object of ghs_app.c decodes to every field it carries, and its length
    /// field is recognised as counting the bytes after it.
    func testSTFixturesDecodeToEveryField() throws {
        for fixture in STFixtures.valid {
            let decoded = try GHSObservationDecoder.decode(fixture.bytes)
            XCTAssertEqual(decoded.observation, fixture.decoded, fixture.name)
            XCTAssertEqual(decoded.lengthCounts, .afterLengthField, fixture.name)
            XCTAssertEqual(Int(decoded.observation.observationClass.rawValue), Int(fixture.bytes[0]), fixture.name)
            XCTAssertEqual(
                decoded.observation.flags.rawValue, UInt16(fixture.bytes[3]) | UInt16(fixture.bytes[4]) << 8, fixture.name)
        }
    }

    /// The fields of NumericOxygenSaturation one by one, as a reader of the decoded value sees them.
    func testNumericOxygenSaturationFields() throws {
        let observation = try GHSObservationDecoder.decode(STFixtures.numericOxygenSaturation).observation
        XCTAssertEqual(observation.observationClass, .numeric)
        XCTAssertEqual(observation.flags, [.observationType, .timestamp, .patient, .supplementalInformation])
        XCTAssertEqual(observation.flags.names, ["observationType", "timestamp", "patient", "supplementalInformation"])
        XCTAssertEqual(observation.type, 150_456)
        XCTAssertEqual(observation.patient, 1)
        XCTAssertEqual(observation.supplementalInformation, [150_588])
        XCTAssertNil(observation.measurementDuration)
        XCTAssertNil(observation.measurementStatus)
        XCTAssertNil(observation.objectID)
        XCTAssertNil(observation.derivedFrom)
        XCTAssertNil(observation.isMemberOf)
        XCTAssertNil(observation.tlvs)
        XCTAssertEqual(observation.value, .numeric(unit: 544, value: .value(98)))
        let timestamp = try XCTUnwrap(observation.timestamp)
        XCTAssertFalse(timestamp.isTickCounter)
        XCTAssertTrue(timestamp.isUTC)
        XCTAssertEqual(timestamp.resolution, .oneSecond)
        XCTAssertFalse(timestamp.usesOffset)
        XCTAssertNil(timestamp.offsetMinutes)
        XCTAssertTrue(timestamp.isCurrentTimeline)
        XCTAssertEqual(timestamp.value, 690_724_210)
        XCTAssertEqual(timestamp.secondsSince2000, 690_724_210)
        XCTAssertEqual(timestamp.timeSource, .cellularNetwork)
        XCTAssertEqual(timestamp.timeSource.name, "cellularNetwork")
        XCTAssertEqual(timestamp.encoded, Array(STFixtures.numericOxygenSaturation[9..<18]))
    }

    /// The sample array's real values are offset + scale factor × sample.
    func testSampleArrayScalesItsSamples() throws {
        guard case .sampleArray(let array) = try GHSObservationDecoder.decode(STFixtures.sampleArrayObservation).observation.value
        else { return XCTFail("not a sample array") }
        XCTAssertEqual(array.scaledSamples, array.samples.map { 2048 + 1612 * Double($0) })
        XCTAssertEqual(array.scaledSamples?.first, 2048 + 1612 * 249)
        XCTAssertEqual(array.samplePeriod.number, 0.01)
        var special = array
        special.scaleFactor = .notANumber
        XCTAssertNil(special.scaledSamples)
    }

    /// The TLV entries keep their bytes; a uint8 sent in three bytes is not read as a number.
    func testTLVEntriesKeepTheirBytes() throws {
        guard case .tlvEncoded(let entries) = try GHSObservationDecoder.decode(STFixtures.tlvEncodedObservation).observation.value
        else { return XCTFail("not TLV-encoded") }
        XCTAssertEqual(entries.map(\.knownFormat), [.uint8, .uint8, .uint8])
        XCTAssertEqual(entries.map(\.bytes.first), [0x62, 0x63, 0x64])
        XCTAssertEqual(entries.map(\.value), [nil, nil, nil])
        // Where the length is the format's width, the value is read.
        XCTAssertEqual(GHSTLV(type: 1, format: 0x04, bytes: [0x62]).value, .unsigned(98))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x0E, bytes: [0xFE, 0xFF]).value, .signed(-2))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x08, bytes: [1, 2, 3, 4]).value, .unsigned(0x0403_0201))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x14, bytes: [0, 0, 0xC0, 0x3F]).value, .number(1.5))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x17, bytes: [0x62, 0, 0, 0]).value, .medical(.value(98)))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x16, bytes: [0x62, 0xF0]).value, .medical(.value(9.8)))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x19, bytes: Array("kg".utf8)).value, .text("kg"))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x19, bytes: [0xFF]).value, nil)
        XCTAssertEqual(GHSTLV(type: 1, format: 0x01, bytes: [1]).value, .boolean(true))
        XCTAssertEqual(GHSTLV(type: 1, format: 0x1B, bytes: [1, 2]).value, nil)
        XCTAssertEqual(GHSTLV(type: 1, format: 0x7F, bytes: [1]).value, nil)
    }

    /// The same objects with Philips' length convention (the whole object, members' too) decode
    /// to the same observations, and the convention is reported.
    func testPhilipsLengthConventionDecodesToTheSameObservations() throws {
        for fixture in STFixtures.valid {
            let philips = STFixtures.wholeObjectLengths(fixture.bytes, memberOffsets: fixture.memberOffsets)
            XCTAssertEqual(Int(philips[1]) | Int(philips[2]) << 8, philips.count, fixture.name)
            let decoded = try GHSObservationDecoder.decode(philips)
            XCTAssertEqual(decoded.observation, fixture.decoded, fixture.name)
            XCTAssertEqual(decoded.lengthCounts, .wholeObject, fixture.name)
        }
    }

    /// A bundle whose members count their length in the other convention than the bundle's is
    /// refused: one sensor uses one convention.
    func testBundleMembersUseTheBundlesConvention() {
        var mixed = STFixtures.observationBundle
        mixed[1] += 3  // the bundle counts itself whole, its members do not
        assertError(mixed, .lengthMismatch, field: "members.length", offset: 21, needed: 15, value: 12)
        let membersOnly = STFixtures.wholeObjectLengths(STFixtures.observationBundle, memberOffsets: [20, 35])
        var bundleOnly = membersOnly
        bundleOnly[1] -= 3
        assertError(bundleOnly, .lengthMismatch, field: "members.length", offset: 21, needed: 12, value: 15)
    }

    /// ghs_app.c's SimpleArrayECGWaveform cannot be one object: its length (151) matches
    /// neither the 264 bytes after it nor the 267 of the whole, and read as GHS its sample count
    /// asks for more than follows. It is refused as a length mismatch, never decoded.
    func testInconsistentECGWaveformIsRefused() {
        XCTAssertEqual(STFixtures.simpleArrayECGWaveform.count, 267)
        assertError(STFixtures.simpleArrayECGWaveform, .lengthMismatch, field: "length", offset: 1, value: 151)
        XCTAssertThrowsError(try GHSObservationDecoder.decode(STFixtures.simpleArrayECGWaveform)) { error in
            XCTAssertEqual((error as? GHSDecodingError)?.needed, 264)
            XCTAssertEqual(
                "\(error)",
                "Live Health Observations (0x2B8B): field length at offset 1 declares 151, but the bytes it counts are 264")
        }
    }

    /// A length field that matches neither convention is refused.
    func testLengthMatchingNeitherConventionIsRefused() {
        for length: UInt8 in [0, 26, 28, 29, 31] {
            var bytes = STFixtures.numericOxygenSaturation
            bytes[1] = length
            assertError(bytes, .lengthMismatch, field: "length", offset: 1, value: Int(length))
        }
    }

    /// Every prefix of every valid object, in both conventions, fails as truncated, never with
    /// another error and never by trapping.
    func testEveryPrefixIsTruncated() {
        for fixture in STFixtures.valid {
            for bytes in [fixture.bytes, STFixtures.wholeObjectLengths(fixture.bytes, memberOffsets: fixture.memberOffsets)] {
                for end in 0..<bytes.count {
                    XCTAssertThrowsError(try GHSObservationDecoder.decode(Array(bytes[..<end]))) { error in
                        XCTAssertEqual((error as? GHSDecodingError)?.code, .truncated, "\(fixture.name) cut at \(end): \(error)")
                    }
                }
            }
        }
    }

    /// A byte after the object is refused, in both conventions.
    func testByteAfterTheObjectIsUnexpected() {
        for fixture in STFixtures.valid {
            for bytes in [fixture.bytes, STFixtures.wholeObjectLengths(fixture.bytes, memberOffsets: fixture.memberOffsets)] {
                XCTAssertThrowsError(try GHSObservationDecoder.decode(bytes + [0])) { error in
                    let error = error as? GHSDecodingError
                    XCTAssertEqual(error?.code, .unexpectedLength, fixture.name)
                    XCTAssertEqual(error?.offset, bytes.count, fixture.name)
                }
            }
        }
    }

    /// Every byte of every object changed to 0x00, 0xFF and with its low and high bits flipped:
    /// each either decodes, as the same number of bytes, or fails with an error inside them.
    func testMutatedObjectsNeverTrap() {
        for fixture in STFixtures.valid + [("SimpleArrayECGWaveform", STFixtures.simpleArrayECGWaveform, fixtureless, [])] {
            for index in fixture.bytes.indices {
                let byte = fixture.bytes[index]
                for mutation in Set([0x00, 0xFF, byte ^ 0x01, byte ^ 0x80]) where mutation != byte {
                    var bytes = fixture.bytes
                    bytes[index] = mutation
                    do {
                        let decoded = try GHSObservationDecoder.decode(bytes)
                        let length = Int(bytes[1]) | Int(bytes[2]) << 8
                        XCTAssertEqual(decoded.lengthCounts.lengthField(forObjectOf: bytes.count), length, fixture.name)
                    } catch {
                        XCTAssertTrue(
                            (0...bytes.count).contains(error.offset), "\(fixture.name) [\(index)] = \(mutation): \(error)")
                    }
                }
            }
        }
    }

    private let fixtureless = GHSObservation(value: .string(""))

    /// A class GHS does not define is refused with its value.
    func testUnknownClassIsRefused() {
        for classByte: UInt8 in [0x00, 0x09, 0x80, 0xFE] {
            var bytes = STFixtures.stringObservation
            bytes[0] = classByte
            assertError(bytes, .unknownClass, field: "class", offset: 0, value: Int(classByte))
        }
        assertError([0x42], .unknownClass, field: "class", offset: 0, value: 0x42)
    }

    /// Each reserved flag bit (10–15) is refused rather than skipped: it could announce a field.
    func testReservedFlagBitsAreRefused() {
        for bit in 10..<16 {
            var bytes = STFixtures.stringObservation
            bytes[4] |= UInt8(1 << (bit - 8))
            assertError(bytes, .reservedValue, field: "flags", offset: 3, value: 1 << bit)
        }
    }

    /// Counts that claim more than the bytes left can hold are refused before anything is
    /// allocated for them.
    func testHugeCountsAreRefused() {
        // Supplemental information: 255 codes, none sent.
        assertError(
            hexBytes("01 0A00 4000 FF 2002 62000000"), .truncated, field: "supplementalInformation", offset: 6, needed: 1020)
        // A sample array of 2^32 − 1 four-byte samples.
        assertError(
            hexBytes("04 1700 0000 B210 01000000 00000000 0A0000FD 01 04 FFFFFFFF 00"), .truncated, field: "samples",
            offset: 25, needed: 4 * 0xFFFF_FFFF)
        // A string of 65535 bytes, 3 sent.
        assertError(hexBytes("03 0700 0000 FFFF 4D616E"), .truncated, field: "string", offset: 7, needed: 0xFFFF)
        // 255 compound components, 255 codes, 255 TLVs, 255 bundle members.
        assertError(hexBytes("07 0300 0000 FF"), .truncated, field: "values", offset: 6, needed: 255 * 11)
        assertError(hexBytes("05 0300 0000 FF"), .truncated, field: "codes", offset: 6, needed: 255 * 4)
        assertError(hexBytes("08 0300 0000 FF"), .truncated, field: "entries", offset: 6, needed: 255 * 7)
        assertError(hexBytes("FF 0300 0000 FF"), .truncated, field: "members", offset: 6, needed: 255 * 5)
        // A TLV whose length runs past the object.
        assertError(
            hexBytes("08 0D00 0000 01 B84B0200 FFFF 04 62"), .truncated, field: "entries.value", offset: 13, needed: 0xFFFF)
    }

    /// Values outside what GHS allows, or what this decoder reads.
    func testValuesOutsideTheirRangeAreRefused() {
        // Three bytes per sample.
        assertError(
            hexBytes("04 1700 0000 B210 01000000 00000000 0A0000FD 01 03 01000000 000000"), .valueOutOfRange,
            field: "bytesPerSample", offset: 20, value: 3)
        // State/event bit strings of 0 and 5 bytes.
        assertError(hexBytes("06 0300 0000 00"), .valueOutOfRange, field: "size", offset: 5, value: 0)
        assertError(
            hexBytes("06 1200 0000 05 FFFFFFFFFF FFFFFFFFFF 0000000000"), .valueOutOfRange, field: "size", offset: 5, value: 5)
        // A compound component of value type 2 (simple discrete).
        assertError(
            hexBytes("07 0E00 0000 01 054A0200 02 200F 64000000"), .unsupportedValue, field: "values.valueType", offset: 10,
            value: 2)
        // A bundle in a bundle.
        assertError(hexBytes("FF 0E00 0000 01 FF 0600 0000 00"), .unsupportedValue, field: "class", offset: 6, value: 0xFF)
        // Text that is not UTF-8.
        assertError(hexBytes("03 0700 0000 0300 4DFF6E"), .invalidUTF8, field: "string", offset: 7)
        // A time stamp with a reserved flag bit.
        assertError(
            hexBytes("03 1000 0200 62 000000000000 00 00 0000"), .reservedValue, field: "timestamp.flags", offset: 5, value: 0x62)
    }

    /// Every header field the flags can announce, in bit order, with a time stamp in
    /// milliseconds and a TZ/DST offset (Philips' default time stamp flags, 0x3A).
    func testEveryHeaderField() throws {
        let bytes = hexBytes(
            """
            01 3D00 FF03
            B84B0200
            3A DC0500000000 06 04
            0A0000FF
            0940
            40E20100
            02
            01 3C4C0200
            02 01000000 02000000
            01 03000000
            01 0A0A0100 0200 06 0500
            2002 62000000
            """)
        let decoded = try GHSObservationDecoder.decode(bytes)
        XCTAssertEqual(decoded.lengthCounts, .afterLengthField)
        let observation = decoded.observation
        XCTAssertEqual(observation.flags.rawValue, 0x03FF)
        XCTAssertEqual(observation.flags.names, GHSObservationFlags.names)
        XCTAssertEqual(observation.type, 150_456)
        XCTAssertEqual(observation.measurementDuration, .value(1))
        XCTAssertEqual(observation.measurementStatus, [.invalid, .calibrating, .thresholdError])
        XCTAssertEqual(observation.measurementStatus?.names, ["invalid", "calibrating", "thresholdError"])
        XCTAssertEqual(observation.objectID, 123_456)
        XCTAssertEqual(observation.patient, 2)
        XCTAssertEqual(observation.supplementalInformation, [150_588])
        XCTAssertEqual(observation.derivedFrom, [1, 2])
        XCTAssertEqual(observation.isMemberOf, [3])
        XCTAssertEqual(observation.tlvs, [GHSTLV(type: 0x0001_0A0A, format: 0x06, bytes: [5, 0])])
        XCTAssertEqual(observation.tlvs?.first?.value, .unsigned(5))
        XCTAssertEqual(observation.value, .numeric(unit: 544, value: .value(98)))
        let timestamp = try XCTUnwrap(observation.timestamp)
        XCTAssertEqual(timestamp.resolution, .oneMillisecond)
        XCTAssertEqual(timestamp.value, 1500)
        XCTAssertEqual(timestamp.elapsedSeconds, 1.5)
        XCTAssertEqual(timestamp.secondsSince2000, 1.5)
        XCTAssertTrue(timestamp.isUTC)
        XCTAssertTrue(timestamp.usesOffset)
        XCTAssertEqual(timestamp.offsetMinutes, 60)
        XCTAssertEqual(timestamp.timeSource, .cellularNetwork)
    }

    /// Resolutions, tick counters, negative offsets and reserved time sources.
    func testTimestampParts() {
        XCTAssertEqual(GHSTimestamp.Resolution.allCases.map(\.seconds), [1, 0.1, 0.001, 0.0001])
        let ticks = GHSTimestamp(flags: 0x01 | 0x0C, value: 12_345, timeSource: .init(rawValue: 9), offsetQuarterHours: -20)
        XCTAssertTrue(ticks.isTickCounter)
        XCTAssertNil(ticks.secondsSince2000)
        XCTAssertEqual(ticks.elapsedSeconds, 1.2345)
        XCTAssertNil(ticks.offsetMinutes)
        XCTAssertEqual(ticks.timeSource, .reserved(9))
        XCTAssertEqual(ticks.timeSource.name, "reserved9")
        let local = GHSTimestamp(flags: 0x14, value: 36_000, timeSource: .manual, offsetQuarterHours: -20)
        XCTAssertFalse(local.isUTC)
        XCTAssertEqual(local.secondsSince2000, 3600)
        XCTAssertEqual(local.offsetMinutes, -300)
        XCTAssertEqual(local.encoded, [0x14, 0xA0, 0x8C, 0, 0, 0, 0, 4, 0xEC])
        XCTAssertEqual((0...7).map { GHSTimeSource(rawValue: $0).rawValue }, Array(0...7))
    }

    /// Errors name the characteristic they are decoded for.
    func testErrorsNameTheCharacteristic() {
        XCTAssertThrowsError(try GHSObservationDecoder.decode([], characteristic: .storedHealthObservations)) { error in
            XCTAssertEqual(
                "\(error)", "Stored Health Observations (0x2BDD): field class at offset 0 is truncated: needs 1 byte, 0 available"
            )
        }
    }

    private func assertError(
        _ bytes: [UInt8], _ code: GHSDecodingError.Code, field: String, offset: Int, needed: Int? = nil, value: Int? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try GHSObservationDecoder.decode(bytes), file: file, line: line) { error in
            guard let error = error as? GHSDecodingError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
            XCTAssertEqual(error.field, field, "\(error)", file: file, line: line)
            XCTAssertEqual(error.offset, offset, "\(error)", file: file, line: line)
            if let needed { XCTAssertEqual(error.needed, needed, "\(error)", file: file, line: line) }
            if let value { XCTAssertEqual(error.value, value, "\(error)", file: file, line: line) }
            XCTAssertEqual(error.characteristic, .liveHealthObservations, file: file, line: line)
        }
    }
}

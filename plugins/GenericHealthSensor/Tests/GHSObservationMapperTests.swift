import Foundation
import GATTDecoding
@testable import GenericHealthSensor
import HealthModel
import XCTest

/// The mapper alone: times, units, statuses and special values.
final class GHSObservationMapperTests: XCTestCase {
    static let device = Device(name: "Thermometer", manufacturer: "Acme")
    static let received = Date(timeIntervalSince1970: 1_800_000_000)

    /// A time stamp: `seconds` since 2000 at 1 s resolution, with `flags`.
    static func timestamp(_ seconds: UInt64, flags: UInt8, offsetQuarterHours: Int8 = 0) -> GHSTimestamp {
        GHSTimestamp(flags: flags, value: seconds, timeSource: GHSTimeSource(rawValue: 1), offsetQuarterHours: offsetQuarterHours)
    }

    static func map(_ observation: GHSObservation, recordNumber: UInt32? = nil) -> GHSObservationMapper.Mapped {
        GHSObservationMapper.records(of: observation, device: device, sensor: "Acme/T-1", recordNumber: recordNumber, receivedAt: received)
    }

    /// Local time with its offset (UTC+1, flag bit 4) is placed at the UTC instant, and the
    /// sensor's own words are kept; a temperature in °F is stored converted into °C.
    func testLocalTimeWithItsOffsetAndFahrenheit() throws {
        // 2027-01-15T09:00:00 local, UTC+1: 08:00:00Z = 1_800_000_000 s since 1970.
        let seconds = UInt64(1_800_000_000 - 946_684_800 + 3600)
        let observation = GHSObservation(
            type: 150_364, timestamp: Self.timestamp(seconds, flags: 0x30, offsetQuarterHours: 4),
            value: .numeric(unit: 4416, value: .float(0xFF00_03DA)))  // 98.6 °F
        let sample = try XCTUnwrap(Self.map(observation).records.first.flatMap { if case .quantity(let q) = $0 { q } else { nil } })
        XCTAssertEqual(sample.type, .bodyTemperature)
        XCTAssertEqual(sample.startDate, Self.received)
        XCTAssertEqual(try sample.quantity.doubleValue(for: .degreeCelsius), 37, accuracy: 1e-9)
        XCTAssertEqual(sample.metadata[.deviceTimestamp], .string("2027-01-15T09:00:00.000+01:00"))
        XCTAssertEqual(sample.metadata[.deviceClock], .bool(true))
        XCTAssertEqual(sample.metadata[.mdcUnit], .integer(4416))
    }

    /// The sensor's time stamp is kept as it said it, to the millisecond: no millisecond of a
    /// second written one less (a Date of .132 may hold .13199996, which a formatter truncates).
    func testDeviceTimestampKeepsEveryMillisecond() {
        let second: UInt64 = 690_724_210_000  // 2021-11-20T11:50:10Z in ms since 2000
        let wrong = (0..<1000).compactMap { ms -> String? in
            let stamp = GHSTimestamp(flags: 0x2A, value: second + UInt64(ms), timeSource: GHSTimeSource(rawValue: 1), offsetQuarterHours: 0)
            let text = GHSObservationMapper.deviceTime(stamp)
            return text == String(format: "2021-11-20T11:50:10.%03dZ", ms) ? nil : text
        }
        XCTAssertEqual(wrong, [])
        let local = GHSTimestamp(flags: 0x38, value: second + 7, timeSource: GHSTimeSource(rawValue: 1), offsetQuarterHours: -20)
        XCTAssertEqual(GHSObservationMapper.deviceTime(local), "2021-11-20T11:50:10.007-05:00")
        let fine = GHSTimestamp(flags: 0x2E, value: 6_907_242_101_327, timeSource: GHSTimeSource(rawValue: 1), offsetQuarterHours: 0)
        XCTAssertEqual(GHSObservationMapper.deviceTime(fine), "2021-11-20T11:50:10.1327Z", "a 100 µs clock's fourth digit")
    }

    /// A header's TLV attributes are kept in the records' metadata, whatever the class; an empty
    /// string is still one observation.
    func testHeaderAttributesAndAnEmptyString() throws {
        let numeric = GHSObservation(
            type: 150_456, tlvs: [GHSTLV(type: 68_300, format: 0x01, bytes: [1]), GHSTLV(type: 68_301, format: 0x14, bytes: [0, 0, 0xC0, 0x3F])],
            value: .numeric(unit: 544, value: .float(97)))
        let sample = try XCTUnwrap(Self.map(numeric).records.first.flatMap { if case .quantity(let q) = $0 { q } else { nil } })
        XCTAssertEqual(sample.type, .oxygenSaturation)
        XCTAssertNil(sample.metadata.mdcValueKind, "a measured value")
        XCTAssertEqual(sample.metadata[.mdcAttribute(68_300)], .bool(true))
        XCTAssertEqual(sample.metadata[.mdcAttribute(68_301)], .double(1.5))
        let empty = Self.map(GHSObservation(type: 68_218, value: .string("")))
        XCTAssertEqual(empty.skipped, [])
        let text = try XCTUnwrap(empty.records.first.flatMap { if case .quantity(let q) = $0 { q } else { nil } })
        XCTAssertEqual(text.type.identifier, "mdc.68218.512")
        XCTAssertEqual(text.metadata[.mdcText], .string(""))
        XCTAssertEqual(GHSObservationMapper.sampleTypeName(68_218, 512), "mdc.68218.512", "what decode names it")
    }

    /// Without a time stamp a live observation is placed at its reception (the gateway's clock,
    /// so no deviceClock), a stored one is not stored; an invalid one and a NaN neither.
    func testWhatIsNotStoredAndWhy() {
        let live = Self.map(GHSObservation(type: 150_456, value: .numeric(unit: 544, value: .float(97))))
        XCTAssertEqual(live.records.first?.device, Self.device)
        if case .quantity(let sample)? = live.records.first {
            XCTAssertEqual(sample.startDate, Self.received)
            XCTAssertNil(sample.metadata[.deviceClock])
            XCTAssertNil(sample.metadata.syncIdentifier, "nothing to recognise it by")
        } else {
            XCTFail("\(live.records)")
        }
        let stored = Self.map(GHSObservation(type: 150_456, value: .numeric(unit: 544, value: .float(97))), recordNumber: 4)
        XCTAssertTrue(stored.records.isEmpty)
        XCTAssertEqual(stored.skipped, ["numeric observation MDC_PULS_OXIM_SAT_O2: a stored observation whose time stamp cannot be placed (none)"])
        let invalid = Self.map(GHSObservation(type: 150_456, measurementStatus: .invalid, value: .numeric(unit: 544, value: .float(97))))
        XCTAssertTrue(invalid.records.isEmpty)
        XCTAssertEqual(invalid.skipped, ["numeric observation MDC_PULS_OXIM_SAT_O2: the sensor marks it invalid"])
        let nan = Self.map(GHSObservation(type: 150_456, value: .numeric(unit: 544, value: .float(0x007F_FFFF))))
        XCTAssertTrue(nan.records.isEmpty)
        XCTAssertEqual(nan.skipped.count, 1)
    }

    /// STMicroelectronics' three observations without a type (a string, a TLV-encoded one, a
    /// sample array) are kept as generic observations of type code 0, with their text,
    /// attributes and samples; so is a numeric one.
    func testObservationsWithoutATypeAreKept() throws {
        let observations = try [STFixtures.stringObservation, STFixtures.tlvEncodedObservation, STFixtures.sampleArrayObservation]
            .map { try GHSObservationDecoder.decode($0).observation } + [GHSObservation(value: .numeric(unit: 544, value: .float(97)))]
        let mapped = observations.map { Self.map($0) }
        XCTAssertEqual(mapped.map(\.skipped), [[], [], [], []])
        guard case .quantity(let text)? = mapped[0].records.first, case .quantity(let settings)? = mapped[1].records.first,
            case .quantitySeries(let wave)? = mapped[2].records.first, case .quantity(let number)? = mapped[3].records.first
        else { return XCTFail("\(mapped.map(\.records))") }
        XCTAssertEqual(text.type.identifier, "mdc.0.512")
        XCTAssertEqual(text.metadata[.mdcText], .string("Man"))
        XCTAssertEqual(text.metadata.mdcValueKind, .text)
        XCTAssertNil(text.metadata[.mdcObservationType], "the sensor sent no type")
        XCTAssertEqual(settings.type.identifier, "mdc.0.512")
        XCTAssertEqual(settings.metadata.mdcValueKind, .attributes)
        XCTAssertEqual(
            [1, 2, 3].map { settings.metadata[.mdcAttribute(150_456, occurrence: $0)] },
            [.string("0x620000"), .string("0x630000"), .string("0x640000")], "uint8 entries three bytes long: kept as sent")
        XCTAssertEqual(wave.type.identifier, "mdc.0.4274")
        let samples: [Double] = [0xF9, 0x07, 0xFB, 0x07, 0xF5, 0x07, 0xFF, 0x07, 0x0C, 0x08]
        XCTAssertEqual(wave.quantities.map(\.value), samples.map { 2048 + 1612 * $0 })
        XCTAssertEqual(number.type.identifier, "mdc.0.544")
        XCTAssertEqual(number.quantity.value, 97)
        XCTAssertEqual(GHSObservationMapper.sampleTypeName(nil, 4274), "mdc.0.4274", "what decode names the array")
    }

    /// A simple-discrete SpO2 code, a bundle's numeric SpO2, a numeric SpO2 alone and one with
    /// an object id, all of the same second: four observations, four identities (the bundle's
    /// SpO2 was lost to the code's record, silently).
    func testObservationsOfOneTimeAndTypeKeepTheirOwnIdentity() throws {
        let time = STFixtures.timestamp
        let discrete = GHSObservation(type: 150_456, timestamp: time, value: .simpleDiscrete(98))
        let bundle = GHSObservation(
            timestamp: time,
            value: .bundle([
                GHSObservation(type: 150_456, value: .numeric(unit: 544, value: .float(98))),
                GHSObservation(type: 149_530, value: .numeric(unit: 2720, value: .float(71))),
            ]))
        let alone = GHSObservation(type: 150_456, timestamp: time, value: .numeric(unit: 544, value: .float(97)))
        let identified = GHSObservation(type: 150_456, timestamp: time, objectID: 7, value: .numeric(unit: 544, value: .float(96)))
        let records = [discrete, bundle, alone, identified].flatMap { Self.map($0).records }
        let identifiers: [String?] = records.map { if case .quantity(let sample) = $0 { sample.metadata.syncIdentifier } else { nil } }
        let places = [
            "150456/simpleDiscrete/-/object", "150456/numeric/544/bundle.0", "149530/numeric/2720/bundle.1", "150456/numeric/544/object",
            "150456/numeric/544/object/o7",
        ]
        XCTAssertEqual(identifiers, places.map { "Acme/T-1/ghs/2021-11-20T11:50:10.000Z/" + $0 })
        XCTAssertEqual(Set(records.map(\.id)).count, 5, "five uuids")
    }

    /// A blood pressure in kPa is a correlation in mmHg; a pressure in a unit that is no
    /// pressure stays as the device's components, generic observations.
    func testBloodPressureInKilopascals() throws {
        let kPa: UInt16 = 3843
        let observation = GHSObservation(
            type: MDCNomenclature.nonInvasiveBloodPressure, timestamp: Self.timestamp(100, flags: 0x22),
            value: .compound([
                GHSCompoundComponent(type: 150_021, unit: kPa, value: .float(0xFF00_00A0)),  // 16.0
                GHSCompoundComponent(type: 150_022, unit: kPa, value: .float(0xFF00_006B)),  // 10.7
                GHSCompoundComponent(type: 150_023, unit: kPa, value: .float(0xFF00_0085)),  // 13.3
            ]))
        let mapped = Self.map(observation)
        guard case .correlation(let bp)? = mapped.records.first else { return XCTFail("\(mapped)") }
        XCTAssertEqual(try XCTUnwrap(bp.object(of: .bloodPressureSystolic)).quantity.doubleValue(for: .millimeterOfMercury), 120.01, accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(bp.object(of: .bloodPressureDiastolic)).quantity.doubleValue(for: .millimeterOfMercury), 80.26, accuracy: 0.01)
        guard case .double(let mean)? = bp.metadata[.meanArterialPressure] else { return XCTFail("no mean") }
        XCTAssertEqual(mean, 99.76, accuracy: 0.01)
        XCTAssertEqual(bp.startDate, GHSObservationMapper.epoch2000.addingTimeInterval(100))

        let volts = GHSObservation(
            type: MDCNomenclature.nonInvasiveBloodPressure, timestamp: Self.timestamp(100, flags: 0x22),
            value: .compound([
                GHSCompoundComponent(type: 150_021, unit: 4274, value: .float(120)),
                GHSCompoundComponent(type: 150_022, unit: 4274, value: .float(80)),
            ]))
        XCTAssertEqual(Self.map(volts).records.map(\.typeIdentifier), ["mdc.150021.4274", "mdc.150022.4274"])
    }
}

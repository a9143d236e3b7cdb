import BLETesting
import GATTDecoding
import GatewayTesting
import HealthDevices
import XCTest

/// Body Composition records split across indications by the Multiple Packet Measurement flag.
final class BodyCompositionReassemblerTests: XCTestCase {
    // eisaev/blevalueparser, tests/bodycompositionmeasurementtest.cpp:
    // FeaturesEven_MultiplePacket_ReservedNone (user 42, muscle %, fat free mass, body water
    // mass, weight) and FeaturesNone_MultiplePacket_ReservedEven (body fat alone), both with the
    // Multiple Packet flag.
    let evenPart = "541512342A34565678789A9ABC"
    let nonePart = "00501234"
    let stamp: [UInt8] = [0xEA, 0x07, 0x0B, 0x17, 0x06, 0x1E, 0x09]

    func testTwoPublishedPartsMakeOneRecord() throws {
        var reassembler = BodyCompositionReassembler()
        XCTAssertEqual(try reassembler.append(hexBytes(evenPart)), [])
        XCTAssertTrue(reassembler.hasPending)
        let records = try reassembler.append(hexBytes(nonePart))
        XCTAssertEqual(records.count, 1)
        let record = try XCTUnwrap(records.first)
        XCTAssertTrue(record.isComplete)
        XCTAssertEqual(record.payloads, [hexBytes(evenPart), hexBytes(nonePart)])
        XCTAssertEqual(record.measurement.bodyFatPercentage, 1333)
        XCTAssertEqual(record.measurement.userID, 42)
        XCTAssertEqual(try XCTUnwrap(record.measurement.weight), 241.41, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(record.measurement.fatFreeMass), 154.03, accuracy: 1e-9)
        XCTAssertFalse(reassembler.hasPending)
    }

    func testASinglePacketRecordPassesThrough() throws {
        var reassembler = BodyCompositionReassembler()
        // FeaturesAll_SinglePacket_ReservedOdd: every field, no Multiple Packet flag.
        let records = try reassembler.append(hexBytes("FEAF1234E7070206121C002A23453456456756786789789A89AB9ABCABCD"))
        XCTAssertEqual(records.map(\.isComplete), [true])
        XCTAssertEqual(records.first?.measurement.timestamp?.rfc3339, "2023-02-06T18:28:00-00:00")
        XCTAssertFalse(reassembler.hasPending)
    }

    /// A first part whose second never comes is emitted incomplete when the next record starts,
    /// whichever way it starts; and by flush() when the link drops.
    func testAPartWithoutItsSecondIsIncomplete() throws {
        var reassembler = BodyCompositionReassembler()
        _ = try reassembler.append(hexBytes(evenPart))
        // A single-packet record evicts it.
        var records = try reassembler.append(hexBytes("0000FFFF"))
        XCTAssertEqual(records.map(\.isComplete), [false, true])
        XCTAssertEqual(records.first?.payloads, [hexBytes(evenPart)])
        // A part that repeats a field the pending one has (weight) starts a new record.
        _ = try reassembler.append(hexBytes(evenPart))
        records = try reassembler.append(hexBytes(evenPart))
        XCTAssertEqual(records.map(\.isComplete), [false])
        XCTAssertTrue(reassembler.hasPending)
        XCTAssertEqual(reassembler.flush()?.isComplete, false)
        XCTAssertNil(reassembler.flush())
    }

    /// Parts of different moments or users are not joined.
    func testPartsWithAnotherTimeStampOrUserAreNotJoined() throws {
        var reassembler = BodyCompositionReassembler()
        // flags 0x1046 (time stamp, user, fat free mass, Multiple Packet); then 0x1402 + user (weight).
        let first: [UInt8] = [0x46, 0x10, 0xE0, 0x00] + stamp + [0x01, 0xE8, 0x2B]
        var later = stamp
        later[6] += 1
        XCTAssertEqual(try reassembler.append(first), [])
        let records = try reassembler.append([0x02, 0x14, 0xE0, 0x00] + later + [0x90, 0x38])
        XCTAssertEqual(records.map(\.isComplete), [false])
        _ = reassembler.flush()
        _ = try reassembler.append(first)
        let otherUser = try reassembler.append([0x04, 0x14, 0xE0, 0x00, 0x02, 0x90, 0x38])
        XCTAssertEqual(otherUser.map(\.isComplete), [false])
        _ = reassembler.flush()
        _ = try reassembler.append(first)
        let same = try reassembler.append([0x06, 0x14, 0xE0, 0x00] + stamp + [0x01, 0x90, 0x38])
        XCTAssertEqual(same.map(\.isComplete), [true])
        XCTAssertEqual(try XCTUnwrap(same.first?.measurement.weight), 72.4, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(same.first?.measurement.fatFreeMass), 56.2, accuracy: 1e-9)
    }

    /// A bad part is an error and keeps the pending part.
    func testABadPartKeepsThePendingOne() throws {
        var reassembler = BodyCompositionReassembler()
        _ = try reassembler.append(hexBytes(evenPart))
        XCTAssertThrowsError(try reassembler.append([0x00, 0x50, 0x12])) { error in
            XCTAssertEqual((error as? HealthDecodingError)?.field, "bodyFatPercentage")
        }
        XCTAssertEqual(try reassembler.append(hexBytes(nonePart)).map(\.isComplete), [true])
    }

    /// Every split of an all-fields record into two parts (each optional field in either part,
    /// time stamp and user in both) reassembles to the record sent whole.
    func testEverySplitOfAnAllFieldsRecord() throws {
        let values: [UInt16] = [0x4523, 0x5634, 0x6745, 0x7856, 0x8967, 0x9A78, 0xAB89, 0xBC9A, 0xCDAB]
        func payload(fieldsOf mask: UInt16, multiple: Bool) -> [UInt8] {
            let flags = UInt16(0x0006) | (mask << 3) | (multiple ? 0x1000 : 0)
            var bytes = [UInt8(flags & 0xFF), UInt8(flags >> 8), 0x12, 0x34] + stamp + [0x2A]
            for (bit, value) in values.enumerated() where mask & (1 << UInt16(bit)) != 0 {
                bytes += [UInt8(value & 0xFF), UInt8(value >> 8)]
            }
            return bytes
        }
        let whole = try BodyCompositionMeasurementDecoder.decode(payload(fieldsOf: 0x1FF, multiple: false))
        for split in UInt16(0)..<512 {
            var reassembler = BodyCompositionReassembler()
            let first = try reassembler.append(payload(fieldsOf: split, multiple: true))
            let second = try reassembler.append(payload(fieldsOf: 0x1FF & ~split, multiple: true))
            XCTAssertEqual(first, [], "split \(split)")
            XCTAssertEqual(second.count, 1, "split \(split)")
            var expected = whole
            expected.flags |= 0x1000
            XCTAssertEqual(second.first?.measurement, expected, "split \(split)")
            XCTAssertEqual(second.first?.isComplete, true)
        }
    }
}

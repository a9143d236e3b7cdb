import BLETesting
import FitnessEquipment
import GatewayTesting
import GATTDecoding
import XCTest

/// Records split across notifications, in every split of every all-fields record.
final class FitnessMachineReassemblerTests: XCTestCase {
    /// Encodes the fields of `groups` (a subset of `layout`'s, in wire order) with `flags`.
    func encode(_ record: FitnessMachineData, layout: FitnessMachineLayout, groups: [FitnessMachineLayout.Group], last: Bool) -> [UInt8] {
        var flags: UInt16 = last ? 0 : 1
        for group in groups where group.bit != 0 { flags |= 1 << UInt16(group.bit) }
        var payload = [UInt8(flags & 0xFF), UInt8(flags >> 8)]
        for group in layout.groups where groups.contains(group) && (group.bit != 0 || last) {
            for field in group.fields {
                let value = record.raw[field.field] ?? 0
                for index in 0..<field.format.width { payload.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
            }
        }
        return payload
    }

    /// Every way to cut the 12 field groups (bits 1–12) into consecutive parts, the last part
    /// also carrying bit 0's group: 2^11 splits per machine. Each must reassemble to the record
    /// sent in one notification.
    func testEverySplitOfAnAllFieldsRecord() throws {
        let records: [(FitnessMachineLayout, String)] = [
            (.treadmill, "FE1F2003EE02881300CEFF1E00640032000101F40158020A8C55080758029CFFFA00"),
            (.indoorBike, "FE1FB80BF00AA00096001027000700C800B900200390010791501815 5802"),
            (.rower, "FE1F32C80030881300 78007D00FA00F0000500F4012C01058241100EB004"),
        ]
        for (layout, hex) in records {
            let whole = try FitnessMachineDataDecoder.decode(hexBytes(hex), layout: layout)
            let fieldGroups = layout.groups.filter { $0.bit != 0 }
            let speedGroup = try XCTUnwrap(layout.groups.first { $0.bit == 0 })
            var failures: [String] = []
            for cuts in 0..<(1 << (fieldGroups.count - 1)) {
                var parts: [[FitnessMachineLayout.Group]] = [[]]
                for (index, group) in fieldGroups.enumerated() {
                    parts[parts.count - 1].append(group)
                    if index < fieldGroups.count - 1, cuts & (1 << index) != 0 { parts.append([]) }
                }
                var reassembler = FitnessMachineReassembler(layout: layout)
                var finished: [FitnessMachineReassembler.Record] = []
                for (index, part) in parts.enumerated() {
                    let last = index == parts.count - 1
                    finished += try reassembler.append(
                        encode(whole, layout: layout, groups: last ? [speedGroup] + part : part, last: last))
                }
                let expected = FitnessMachineReassembler.Record(
                    data: FitnessMachineData(characteristic: layout.characteristic, flags: 0x1FFE, raw: whole.raw),
                    isComplete: true, parts: parts.count)
                if finished != [expected] { failures.append("\(layout.characteristic) cuts \(cuts): \(finished)") }
                if reassembler.hasPending { failures.append("\(layout.characteristic) cuts \(cuts): pending left") }
            }
            XCTAssertEqual(failures.prefix(3), [])
            XCTAssertEqual(failures.count, 0)
        }
    }

    func testTwoPartIndoorBikeRecord() throws {
        var reassembler = FitnessMachineReassembler(layout: .indoorBike)
        // Part 1: More Data, cadence 90 /min and power 200 W.
        XCTAssertEqual(try reassembler.append(hexBytes("4500 B400 C800")), [])
        XCTAssertTrue(reassembler.hasPending)
        // Part 2: the last: speed 25 km/h and total distance 10 km.
        let records = try reassembler.append(hexBytes("1000 C409 102700"))
        XCTAssertEqual(records.count, 1)
        let record = try XCTUnwrap(records.first)
        XCTAssertTrue(record.isComplete)
        XCTAssertEqual(record.parts, 2)
        XCTAssertEqual(record.data.flags, 0x0054)
        let bike = IndoorBikeData(record.data)
        XCTAssertEqual(try XCTUnwrap(bike.instantaneousSpeed), 2500.0 / 360, accuracy: 1e-12)
        XCTAssertEqual(bike.instantaneousCadence, 90)
        XCTAssertEqual(bike.instantaneousPower, 200)
        XCTAssertEqual(bike.totalDistance, 10_000)
        XCTAssertFalse(reassembler.hasPending)
    }

    func testAMachineThatNeverClearsMoreDataStillDeliversEveryRecord() throws {
        // A rower that sets More Data on every notification: each repeated field evicts the
        // previous record, incomplete, one notification late.
        var reassembler = FitnessMachineReassembler(layout: .rower)
        XCTAssertEqual(try reassembler.append(hexBytes("2500 E80300 FA00")), [])
        let second = try reassembler.append(hexBytes("2500 E90300 FB00"))
        XCTAssertEqual(second.map(\.isComplete), [false])
        XCTAssertEqual(second.first.map { RowerData($0.data).totalDistance }, 1000)
        XCTAssertEqual(second.first.map { RowerData($0.data).instantaneousPower }, 250)
        XCTAssertEqual(second.first?.data.moreData, true)
        let flushed = try XCTUnwrap(reassembler.flush())
        XCTAssertEqual(RowerData(flushed.data).totalDistance, 1001)
        XCTAssertNil(reassembler.flush())
    }

    func testARepeatedFieldInTheLastPartEvictsAndCompletes() throws {
        var reassembler = FitnessMachineReassembler(layout: .treadmill)
        _ = try reassembler.append(hexBytes("0500 881300"))  // More Data, distance 5000 m
        // The last part repeats the distance: the pending record lost its end.
        let records = try reassembler.append(hexBytes("0400 E803 891300"))
        XCTAssertEqual(records.map(\.isComplete), [false, true])
        XCTAssertEqual(records.map { TreadmillData($0.data).totalDistance }, [5000, 5001])
        XCTAssertEqual(records.last.map { TreadmillData($0.data).instantaneousSpeed }, 1000.0 / 360)
    }

    func testThePartLimitBoundsAPendingRecord() throws {
        var reassembler = FitnessMachineReassembler(layout: .indoorBike, maximumParts: 2)
        XCTAssertEqual(try reassembler.append(hexBytes("0500 B400")), [])  // cadence
        XCTAssertEqual(try reassembler.append(hexBytes("4100 C800")), [])  // power
        let evicted = try reassembler.append(hexBytes("1100 102700"))  // distance: a third part
        XCTAssertEqual(evicted.map(\.parts), [2])
        XCTAssertEqual(evicted.map(\.isComplete), [false])
        // Parts with no field at all only count.
        var empty = FitnessMachineReassembler(layout: .indoorBike, maximumParts: 3)
        XCTAssertEqual(try empty.append(hexBytes("0100")), [])
        XCTAssertEqual(try empty.append(hexBytes("0100")), [])
        XCTAssertEqual(try empty.append(hexBytes("0000 E803")).map(\.parts), [3])
    }

    func testABadPartKeepsThePendingRecord() throws {
        var reassembler = FitnessMachineReassembler(layout: .indoorBike)
        _ = try reassembler.append(hexBytes("0500 B400"))
        XCTAssertThrowsError(try reassembler.append(hexBytes("4100 C8"))) { error in
            XCTAssertEqual((error as? FitnessDecodingError)?.field, "instantaneousPower")
        }
        let records = try reassembler.append(hexBytes("0000 E803"))
        XCTAssertEqual(records.map(\.isComplete), [true])
        XCTAssertEqual(records.first.map { IndoorBikeData($0.data).instantaneousCadence }, 90)
        XCTAssertEqual(records.first?.parts, 2)
    }
}

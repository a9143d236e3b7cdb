import BLETesting
import GATTDecoding
import GenericHealthSensor
import XCTest

/// The segmentation of Live and Stored Health Observations: objects split in every segment
/// size, counters that wrap, and each way a segment goes missing.
final class GHSSegmentReassemblerTests: XCTestCase {
    typealias Outcome = GHSSegmentReassembler.Outcome

    /// The bundle split into every segment size from one byte to the whole object, counters
    /// starting at 62 so that they wrap, one reassembler for all (the counter continues from
    /// object to object), each followed by a one-segment object.
    func testEverySegmentSizeWithWrappingCounters() throws {
        let object = STFixtures.observationBundle
        let next = STFixtures.numericOxygenSaturation
        var reassembler = GHSSegmentReassembler()
        var counter: UInt8 = 62
        for size in 1...object.count {
            let segments = GHSSegmentReassembler.segments(of: object, payloadSize: size, firstCounter: counter)
            XCTAssertEqual(segments.count, (object.count + size - 1) / size)
            for (index, segment) in segments.enumerated() {
                XCTAssertEqual(segment[0] >> 2, UInt8((Int(counter) + index) % 64), "size \(size)")
                let outcome = reassembler.receive(segment)
                XCTAssertEqual(
                    outcome, index == segments.count - 1 ? [.complete(object)] : [.needMore], "size \(size) segment \(index)")
            }
            counter = UInt8((Int(counter) + segments.count) % 64)
            let single = GHSSegmentReassembler.segments(of: next, payloadSize: 244, firstCounter: counter)
            XCTAssertEqual(single.count, 1)
            XCTAssertEqual(single[0][0] & 0x03, 0x03, "one segment is both first and last")
            guard case .complete(let bytes)? = reassembler.receive(single[0]).last else { return XCTFail("size \(size)") }
            XCTAssertEqual(try GHSObservationDecoder.decode(bytes).observation, STFixtures.numericOxygenSaturationDecoded)
            counter = (counter + 1) % 64
        }
        XCTAssertFalse(reassembler.isCollecting)
    }

    /// A lost middle segment drops the object once (out of order; its later segments are
    /// discarded); the next object still decodes.
    func testLostMiddleSegmentDropsOnlyItsObject() throws {
        var reassembler = GHSSegmentReassembler()
        let segments = GHSSegmentReassembler.segments(of: STFixtures.observationBundle, payloadSize: 12, firstCounter: 10)
        XCTAssertEqual(segments.count, 5)
        XCTAssertEqual(reassembler.receive(segments[0]), [.needMore])
        XCTAssertEqual(reassembler.receive(segments[1]), [.needMore])
        XCTAssertEqual(reassembler.receive(segments[3]), [.dropped(.outOfOrder)])
        XCTAssertFalse(reassembler.isCollecting)
        XCTAssertEqual(reassembler.receive(segments[4]), [.discarded])
        let next = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 4, firstCounter: 15)
        XCTAssertEqual(
            next.map { reassembler.receive($0) }, [[.needMore], [.needMore], [.complete(STFixtures.stringObservation)]])
        XCTAssertEqual(try GHSObservationDecoder.decode(STFixtures.stringObservation).observation.value, .string("Man"))
    }

    /// Segments that arrive in the wrong order drop their object, once: the swapped segment
    /// arriving late is a part of it.
    func testOutOfOrderSegmentsDropTheirObject() {
        var reassembler = GHSSegmentReassembler()
        let segments = GHSSegmentReassembler.segments(of: STFixtures.numericOxygenSaturation, payloadSize: 8, firstCounter: 63)
        XCTAssertEqual(segments.count, 4)
        XCTAssertEqual(reassembler.receive(segments[0]), [.needMore])
        XCTAssertEqual(reassembler.receive(segments[2]), [.dropped(.outOfOrder)])
        XCTAssertEqual(reassembler.receive(segments[1]), [.discarded])
        XCTAssertEqual(reassembler.receive(segments[3]), [.discarded])
        // A first segment out of sequence while an object is pending: the pending one is
        // dropped, and the first segment starts the next object.
        let first = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 5, firstCounter: 3)
        XCTAssertEqual(reassembler.receive(first[0]), [.needMore])
        let skipped = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 100, firstCounter: 9)
        XCTAssertEqual(reassembler.receive(skipped[0]), [.dropped(.outOfOrder), .complete(STFixtures.stringObservation)])
    }

    /// A continuation with no first segment before it (the connection began mid-object) drops
    /// its object once; the rest of that object is discarded.
    func testContinuationWithoutFirstSegment() {
        var reassembler = GHSSegmentReassembler()
        let segments = GHSSegmentReassembler.segments(of: STFixtures.numericOxygenSaturation, payloadSize: 10, firstCounter: 0)
        XCTAssertEqual(reassembler.receive(segments[1]), [.dropped(.missingFirstSegment)])
        XCTAssertEqual(reassembler.receive(segments[2]), [.discarded])
        let whole = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 100, firstCounter: 3)
        XCTAssertEqual(reassembler.receive(whole[0]), [.complete(STFixtures.stringObservation)])
    }

    /// A first segment in sequence while an object is pending: the sensor started over; the
    /// pending object is dropped and the new one kept.
    func testInterruptedObject() {
        var reassembler = GHSSegmentReassembler()
        let first = GHSSegmentReassembler.segments(of: STFixtures.numericOxygenSaturation, payloadSize: 10, firstCounter: 20)
        XCTAssertEqual(reassembler.receive(first[0]), [.needMore])
        let restart = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 100, firstCounter: 21)
        XCTAssertEqual(reassembler.receive(restart[0]), [.dropped(.interrupted), .complete(STFixtures.stringObservation)])
        let longer = GHSSegmentReassembler.segments(of: STFixtures.numericOxygenSaturation, payloadSize: 20, firstCounter: 22)
        XCTAssertEqual(reassembler.receive(longer[0]), [.needMore])
        let again = GHSSegmentReassembler.segments(of: STFixtures.numericOxygenSaturation, payloadSize: 10, firstCounter: 23)
        XCTAssertEqual(reassembler.receive(again[0]), [.dropped(.interrupted), .needMore])
    }

    /// An empty value is dropped and leaves the object being collected alone.
    func testEmptySegmentIsDroppedAlone() {
        var reassembler = GHSSegmentReassembler()
        let segments = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 6, firstCounter: 0)
        XCTAssertEqual(reassembler.receive(segments[0]), [.needMore])
        XCTAssertEqual(reassembler.receive([]), [.dropped(.emptySegment)])
        XCTAssertEqual(reassembler.receive(segments[1]), [.complete(STFixtures.stringObservation)])
    }

    /// An object over the cap is dropped, with each of its later segments, and the next one
    /// is kept.
    func testObjectOverTheCapIsDropped() {
        var reassembler = GHSSegmentReassembler(maximumObjectSize: 20)
        let segments = GHSSegmentReassembler.segments(of: STFixtures.numericOxygenSaturation, payloadSize: 8, firstCounter: 0)
        XCTAssertEqual(
            segments.map { reassembler.receive($0) }, [[.needMore], [.needMore], [.dropped(.tooLarge)], [.discarded]])
        let small = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 10, firstCounter: 4)
        XCTAssertEqual(reassembler.receive(small[0]), [.complete(STFixtures.stringObservation)])
        let whole = GHSSegmentReassembler.segments(of: STFixtures.numericOxygenSaturation, payloadSize: 100, firstCounter: 5)
        XCTAssertEqual(reassembler.receive(whole[0]), [.dropped(.tooLarge)])
        XCTAssertEqual(GHSSegmentReassembler().maximumObjectSize, 65_536)
    }

    /// Each way an observation is lost is one drop, whatever its number of segments: an ECG
    /// array in 28 segments missing its 10th, its first and second segments swapped, its second
    /// and third swapped; the observation after each one is whole.
    func testEachLostObservationIsDroppedOnce() throws {
        let array = Array(STFixtures.sampleArrayObservation.prefix(27)) + [UInt8](repeating: 0x07, count: 250)
        var counter: UInt8 = 50
        var reassembler = GHSSegmentReassembler()
        func send(_ order: (inout [[UInt8]]) -> Void) -> [Outcome] {
            var segments = GHSSegmentReassembler.segments(of: array, payloadSize: 10, firstCounter: counter)
            XCTAssertEqual(segments.count, 28)
            counter = UInt8((Int(counter) + segments.count) % 64)
            order(&segments)
            var outcomes = segments.flatMap { reassembler.receive($0) }
            let next = GHSSegmentReassembler.segments(of: STFixtures.stringObservation, payloadSize: 4, firstCounter: counter)
            counter = UInt8((Int(counter) + next.count) % 64)
            outcomes += next.flatMap { reassembler.receive($0) }
            XCTAssertEqual(outcomes.last, .complete(STFixtures.stringObservation))
            return outcomes.filter { if case .dropped = $0 { true } else { false } }
        }
        XCTAssertEqual(send { $0.remove(at: 9) }, [.dropped(.outOfOrder)])
        XCTAssertEqual(send { $0.swapAt(0, 1) }, [.dropped(.missingFirstSegment)])
        XCTAssertEqual(send { $0.swapAt(1, 2) }, [.dropped(.outOfOrder)])
        XCTAssertEqual(send { $0.removeFirst() }, [.dropped(.missingFirstSegment)])
        XCTAssertEqual(send { _ in }, [])
    }

    /// The reasons' names are stable: they name counters.
    func testDropReasonNames() {
        XCTAssertEqual(
            GHSSegmentReassembler.DropReason.allCases.map(\.name),
            ["emptySegment", "missingFirstSegment", "outOfOrder", "interrupted", "tooLarge"])
    }

    /// A stored observation is its record number and the object (Philips' simulator writes the
    /// record id before the object it segments); errors count offsets from the record number.
    func testStoredObservationRecordNumber() throws {
        let value = [0x2A, 0, 0, 0] + STFixtures.numericOxygenSaturation
        let split = try GHSStoredObservation.split(value)
        XCTAssertEqual(split.recordNumber, 42)
        XCTAssertEqual(split.object, STFixtures.numericOxygenSaturation)
        let stored = try GHSStoredObservation.decode(value)
        XCTAssertEqual(stored.recordNumber, 42)
        XCTAssertEqual(stored.observation.observation, STFixtures.numericOxygenSaturationDecoded)
        XCTAssertThrowsError(try GHSStoredObservation.split([1, 2, 3])) { error in
            XCTAssertEqual((error as? GHSDecodingError)?.code, .truncated)
            XCTAssertEqual((error as? GHSDecodingError)?.characteristic, .storedHealthObservations)
        }
        XCTAssertThrowsError(try GHSStoredObservation.decode([1, 0, 0, 0, 0x09, 0, 0])) { error in
            XCTAssertEqual((error as? GHSDecodingError)?.code, .unknownClass)
            XCTAssertEqual((error as? GHSDecodingError)?.offset, 4)
        }
        XCTAssertThrowsError(try GHSStoredObservation.decode(value + [0])) { error in
            XCTAssertEqual((error as? GHSDecodingError)?.code, .unexpectedLength)
        }
    }
}

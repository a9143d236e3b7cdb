import GatewayTesting
import HealthModel
@testable import HealthStore
import XCTest

/// The store's series blobs: every time and value reads back exactly, a regular stream costs a
/// byte or two an item, appending equals encoding the whole, and a damaged blob is an error,
/// never a trap.
final class SeriesEncodingTests: XCTestCase {
    private typealias Quantity = QuantitySeriesEncoding.Quantity

    /// A heart rate a second, with the jitter of a gateway's receive times.
    private func heartRates(_ count: Int, seed: UInt64) -> [Quantity] {
        var random = SeededRandom(seed: seed)
        var offset: Int64 = 0
        var value = 80.0
        return (0..<count).map { index in
            if index > 0 { offset += 1_000_000 + Int64(random.next() % 20_001) - 10_000 }
            value = min(190, max(40, value + Double(Int(random.next() % 5) - 2)))
            return Quantity(offset: offset, duration: 0, value: value)
        }
    }

    func testRandomSeriesReadBackExactlyInEveryMode() throws {
        var random = SeededRandom(seed: 7)
        for round in 0..<500 {
            let count = Int(random.next() % 300) + 1
            let mode = round % 4
            var offset: Int64 = 0
            let quantities = (0..<count).map { index -> Quantity in
                if index > 0 { offset += Int64(random.next() % 5_000_000) }
                let value: Double = switch mode {
                case 0: Double(Int(random.next() % 400))
                case 1: Double(Int(random.next() % 100_000)) / 100
                case 2: Double(bitPattern: random.next() & 0x3FEF_FFFF_FFFF_FFFF)  // any finite double
                default: Double(Int(random.next() % 10_000)) / 1000 - 5
                }
                let duration = mode == 3 ? Int64(random.next() % 2_000_000) : 0
                return Quantity(offset: offset, duration: duration, value: value)
            }
            let bytes = QuantitySeriesEncoding.encode(quantities)
            XCTAssertEqual(try QuantitySeriesEncoding.decode(bytes), quantities, "round \(round)")
        }
    }

    func testAStrapsMinuteOfHeartRateTakesAboutTwoBytesAReading() throws {
        let minute = heartRates(60, seed: 1)
        let bytes = QuantitySeriesEncoding.encode(minute)
        XCTAssertEqual(try QuantitySeriesEncoding.decode(bytes), minute)
        // Receive-time jitter of ±10 ms costs the times a second byte; the values take one.
        XCTAssertLessThanOrEqual(bytes.count, 4 + 60 * 4, "\(bytes.count) bytes")
        let regular = (0..<60).map { Quantity(offset: Int64($0) * 1_000_000, duration: 0, value: Double(80 + $0 % 3)) }
        // The first step and the first value take a few bytes once; every later reading takes two.
        XCTAssertLessThanOrEqual(QuantitySeriesEncoding.encode(regular).count, 9 + 59 * 2)
    }

    func testAppendingEqualsEncodingTheWholeAndRescalesWhenAValueNeedsIt() throws {
        let quantities: [Quantity] = [
            Quantity(offset: 0, duration: 0, value: 81),
            Quantity(offset: 1_000_000, duration: 0, value: 82),
            Quantity(offset: 2_000_000, duration: 0, value: 8.41),  // a decimal: scale 2 from here
            Quantity(offset: 3_000_000, duration: 250_000, value: 8.4),  // a duration: flags change
            Quantity(offset: 4_000_000, duration: 0, value: 1.0 / 3),  // no decimal: raw values
        ]
        var appender = QuantitySeriesEncoding.Appender(scale: 0, durations: false)
        for (index, quantity) in quantities.enumerated() {
            appender.append(quantity)
            let prefix = Array(quantities[...index])
            XCTAssertEqual(try QuantitySeriesEncoding.decode(appender.bytes), prefix, "after \(index + 1)")
            XCTAssertEqual(appender.count, index + 1)
        }
        XCTAssertEqual(appender.scale, QuantitySeriesEncoding.rawScale)
        XCTAssertTrue(appender.durations)
        // Picked up from its bytes, it goes on as it was.
        var resumed = try QuantitySeriesEncoding.Appender(decoding: Array(QuantitySeriesEncoding.encode(Array(quantities.prefix(2)))))
        resumed.append(quantities[2])
        XCTAssertEqual(try QuantitySeriesEncoding.decode(resumed.bytes), Array(quantities.prefix(3)))
        // A long series: the count's varint grows past one byte.
        var long = QuantitySeriesEncoding.Appender(scale: 0, durations: false)
        let many = heartRates(300, seed: 3)
        for quantity in many { long.append(quantity) }
        XCTAssertEqual(long.bytes, QuantitySeriesEncoding.encode(many))
    }

    func testBeatsReadBackExactlyAtEveryResolution() throws {
        var random = SeededRandom(seed: 11)
        for resolution in 0..<3 {
            var time = 0.0
            let beats = (0..<500).map { index -> Heartbeat in
                let ticks = 600 + Double(random.next() % 400)
                let step: Double = switch resolution {
                case 0: ticks / 1024
                case 1: ticks / 1000
                default: ticks / 997
                }
                time += step
                return Heartbeat(timeSinceSeriesStart: time, precededByGap: index % 37 == 0)
            }
            XCTAssertEqual(try HeartbeatEncoding.decode(HeartbeatEncoding.encode(beats)), beats, "resolution \(resolution)")
        }
        XCTAssertEqual(try HeartbeatEncoding.decode(HeartbeatEncoding.encode([])), [])
    }

    func testAMinuteOfRRIntervalsTakesAboutABytesAndAHalfABeat() throws {
        // 70 beats with successive RR differences within ±60 ms, in 1/1024 s as straps send them.
        var random = SeededRandom(seed: 5)
        var time = 0.0
        var interval = 880.0
        let beats = (0..<70).map { _ -> Heartbeat in
            interval = min(1100, max(600, interval + Double(Int(random.next() % 121) - 60)))
            time += interval / 1024
            return Heartbeat(timeSinceSeriesStart: time, precededByGap: false)
        }
        let bytes = HeartbeatEncoding.encode(beats)
        XCTAssertEqual(try HeartbeatEncoding.decode(bytes), beats)
        XCTAssertLessThanOrEqual(bytes.count, 4 + 70 * 2, "\(bytes.count) bytes")
    }

    func testEveryTruncationAndCorruptionIsAnErrorNotATrap() throws {
        let series = QuantitySeriesEncoding.encode(heartRates(40, seed: 9))
        let beats = HeartbeatEncoding.encode((1...40).map { Heartbeat(timeSinceSeriesStart: Double($0) * 0.8, precededByGap: false) })
        for length in 0..<series.count {
            XCTAssertThrowsError(try QuantitySeriesEncoding.decode(Array(series.prefix(length))), "length \(length)")
        }
        for length in 0..<beats.count {
            XCTAssertThrowsError(try HeartbeatEncoding.decode(Array(beats.prefix(length))), "length \(length)")
        }
        XCTAssertThrowsError(try QuantitySeriesEncoding.decode(series + [0]))
        XCTAssertThrowsError(try QuantitySeriesEncoding.decode([9] + series.dropFirst()))
        XCTAssertThrowsError(try QuantitySeriesEncoding.decode([1, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]))
        XCTAssertThrowsError(try HeartbeatEncoding.decode([1, 0] + Array(repeating: 0xFF, count: 11)))
        // Random bytes: an error or a decoding, never a trap.
        var random = SeededRandom(seed: 13)
        for _ in 0..<2000 {
            let bytes = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = try? QuantitySeriesEncoding.decode([1] + bytes)
            _ = try? HeartbeatEncoding.decode([1] + bytes)
        }
    }
}

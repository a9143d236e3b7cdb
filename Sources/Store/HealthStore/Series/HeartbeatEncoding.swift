import HealthModel

/// How a heartbeat series' beats are kept in the store: one blob in the series' row, about a byte
/// or two a beat.
///
/// A beat's time (seconds from the series' start) is counted in ticks of the series' resolution:
/// 1/1024 s, the unit of Bluetooth's and ANT+'s RR intervals, when every beat falls on one
/// exactly; else the microsecond when every beat does; else the beats' 64-bit times are kept
/// as they are. Each beat writes the change of the interval from the beat before (the first
/// from 0), zigzagged, shifted left once, with the gap flag in the low bit: a regular rhythm
/// costs a byte a beat, every time reads back exactly.
///
/// Layout: a format byte (1), the resolution (0: 1/1024 s, 1: µs, 255: raw), the count as a
/// varint, then per beat the varint described (raw: the time's bits as a little-endian word and
/// a gap byte).
enum HeartbeatEncoding {
    static let format: UInt8 = 1

    private enum Resolution: UInt8 {
        case ticks1024 = 0
        case microseconds = 1
        case raw = 255

        var perSecond: Double {
            switch self {
            case .ticks1024: 1024
            case .microseconds: 1_000_000
            case .raw: 1
            }
        }

        /// Whether `time` (s) is a whole number of ticks at this resolution.
        func holds(_ time: Double) -> Bool {
            let ticks = (time * perSecond).rounded()
            return abs(ticks) < 9_007_199_254_740_992 && ticks / perSecond == time
        }
    }

    static func encode(_ beats: [Heartbeat]) -> [UInt8] {
        let resolution: Resolution =
            if beats.allSatisfy({ Resolution.ticks1024.holds($0.timeSinceSeriesStart) }) { .ticks1024 }
            else if beats.allSatisfy({ Resolution.microseconds.holds($0.timeSinceSeriesStart) }) { .microseconds }
            else { .raw }
        var bytes: [UInt8] = [format, resolution.rawValue]
        bytes.reserveCapacity(8 + beats.count * 2)
        SeriesBytes.appendVarint(UInt64(beats.count), to: &bytes)
        var last: Int64 = 0
        var lastInterval: Int64 = 0
        for beat in beats {
            if resolution == .raw {
                SeriesBytes.appendWord(beat.timeSinceSeriesStart.bitPattern, to: &bytes)
                bytes.append(beat.precededByGap ? 1 : 0)
                continue
            }
            let ticks = Int64((beat.timeSinceSeriesStart * resolution.perSecond).rounded())
            let interval = ticks &- last
            let change = SeriesBytes.zigzag(interval &- lastInterval)
            SeriesBytes.appendVarint(change << 1 | (beat.precededByGap ? 1 : 0), to: &bytes)
            last = ticks
            lastInterval = interval
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws(SeriesEncodingError) -> [Heartbeat] {
        var reader = SeriesBytes.Reader(bytes)
        guard try reader.byte() == format else { throw .malformed("an unknown format") }
        guard let resolution = Resolution(rawValue: try reader.byte()) else { throw .malformed("an unknown resolution") }
        let count = try reader.varint()
        guard count <= UInt64(bytes.count) else { throw .malformed("a count of \(count) in \(bytes.count) bytes") }
        var beats: [Heartbeat] = []
        beats.reserveCapacity(Int(count))
        var last: Int64 = 0
        var lastInterval: Int64 = 0
        for _ in 0..<count {
            if resolution == .raw {
                let time = Double(bitPattern: try reader.word())
                beats.append(Heartbeat(timeSinceSeriesStart: time, precededByGap: try reader.byte() == 1))
                continue
            }
            let value = try reader.varint()
            lastInterval &+= SeriesBytes.unzigzag(value >> 1)
            last &+= lastInterval
            beats.append(Heartbeat(timeSinceSeriesStart: Double(last) / resolution.perSecond, precededByGap: value & 1 == 1))
        }
        guard reader.isAtEnd else { throw .malformed("bytes after the last beat") }
        return beats
    }
}

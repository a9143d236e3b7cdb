/// How a quantity series' quantities are kept in the store: one blob per series, a few bytes a
/// quantity, with no uuid or index entry per quantity.
///
/// Times are microseconds from the series' start (its first quantity's start), the store's
/// resolution. Each quantity after the first writes the change of the step between starts
/// (delta of delta, as Gorilla and Prometheus write timestamps: readings a second apart cost one
/// byte), its duration when the series has any, and its value: as the change of an integer
/// `value × 10^scale` when every value of the series is such a decimal (a heart rate, a power, a
/// speed in the device's resolution: usually one byte), else as the value's 64 bits. Every value
/// and time reads back exactly.
///
/// Layout: a format byte (1), a flags byte (bit 0: durations present), the scale (0…6, or 255
/// for raw values), the count as a varint, then per quantity: the zigzag varint of the
/// start step's change (none for the first, which starts at 0), the duration as a varint
/// (with durations), and the zigzag varint of the scaled value's change from the previous one
/// (the first from 0), or the value's bits as a little-endian word (raw).
///
/// ``Appender`` adds quantities to an encoded series without decoding it, as the writer extends
/// an open series with each transaction; a quantity the series' scale or flags cannot hold
/// re-encodes it once.
struct QuantitySeriesEncoding {
    /// One quantity in the store's units: microseconds and the value in the series' unit.
    struct Quantity: Hashable, Sendable {
        var offset: Int64
        var duration: Int64
        var value: Double
    }

    static let format: UInt8 = 1
    static let rawScale: UInt8 = 255

    /// The bytes of `quantities` (offsets non-decreasing from 0).
    static func encode(_ quantities: [Quantity]) -> [UInt8] {
        var appender = Appender(scale: commonScale(of: quantities.map(\.value)),
                                durations: quantities.contains { $0.duration != 0 })
        for quantity in quantities { appender.appendEncodable(quantity) }
        return appender.bytes
    }

    /// The quantities of `bytes`.
    static func decode(_ bytes: [UInt8]) throws(SeriesEncodingError) -> [Quantity] {
        try decode(bytes) { $0 }
    }

    /// The quantities of `bytes` (an array, or a blob's bytes in place), each made into the
    /// caller's element by `transform` as it is read: no copy of the bytes and no array but the
    /// result.
    static func decode<Bytes: RandomAccessCollection<UInt8>, Element>(
        _ bytes: Bytes, _ transform: (Quantity) -> Element
    ) throws(SeriesEncodingError) -> [Element] where Bytes.Index == Int {
        var reader = SeriesBytes.Reader(bytes)
        guard try reader.byte() == format else { throw .malformed("an unknown format") }
        let durations = try reader.byte() & 1 == 1
        let scale = try reader.byte()
        guard scale <= 6 || scale == rawScale else { throw .malformed("scale \(scale)") }
        let count = try reader.varint()
        guard count <= UInt64(bytes.count) else { throw .malformed("a count of \(count) in \(bytes.count) bytes") }
        var quantities: [Element] = []
        quantities.reserveCapacity(Int(count))
        var offset: Int64 = 0
        var step: Int64 = 0
        var scaled: Int64 = 0
        let divisor = scale == rawScale ? 1 : Double(powerOfTen(Int(scale)))
        for index in 0..<Int(count) {
            if index > 0 {
                step &+= SeriesBytes.unzigzag(try reader.varint())
                offset &+= step
            }
            let duration = durations ? Int64(bitPattern: try reader.varint()) : 0
            let value: Double
            if scale == rawScale {
                value = Double(bitPattern: try reader.word())
            } else {
                scaled &+= SeriesBytes.unzigzag(try reader.varint())
                value = Double(scaled) / divisor
            }
            quantities.append(transform(Quantity(offset: offset, duration: duration, value: value)))
        }
        guard reader.isAtEnd else { throw .malformed("bytes after the last quantity") }
        return quantities
    }

    /// The smallest scale at which every value is an exact decimal, or ``rawScale``.
    static func commonScale(of values: some Sequence<Double>) -> UInt8 {
        var scale = 0
        for value in values {
            while scale <= 6, !isExact(value, scale: scale) { scale += 1 }
            if scale > 6 { return rawScale }
        }
        return UInt8(scale)
    }

    static func isExact(_ value: Double, scale: Int) -> Bool {
        let factor = Double(powerOfTen(scale))
        let scaled = (value * factor).rounded()
        // 2^53: beyond it not every integer is a Double, and the changes could overflow.
        return abs(scaled) < 9_007_199_254_740_992 && scaled / factor == value
    }

    static func powerOfTen(_ exponent: Int) -> Int64 {
        var result: Int64 = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }

    /// An encoded series and what appending to it needs: the last offset, step and value.
    struct Appender: Hashable, Sendable {
        private(set) var bytes: [UInt8]
        private(set) var count = 0
        private(set) var scale: UInt8
        private(set) var durations: Bool
        private var lastOffset: Int64 = 0
        private var lastStep: Int64 = 0
        private var lastScaled: Int64 = 0
        /// The header's length before the count: the count is rewritten in place.
        private static let headerLength = 3

        /// An empty series at `scale`, with or without durations.
        init(scale: UInt8, durations: Bool) {
            self.scale = scale
            self.durations = durations
            bytes = [QuantitySeriesEncoding.format, durations ? 1 : 0, scale, 0]
        }

        /// Picks up an encoded series to append to.
        init(decoding bytes: [UInt8]) throws(SeriesEncodingError) {
            let quantities = try QuantitySeriesEncoding.decode(bytes)
            var reader = SeriesBytes.Reader(bytes)
            _ = try reader.byte()
            let durations = try reader.byte() & 1 == 1
            let scale = try reader.byte()
            self.init(scale: scale, durations: durations)
            for quantity in quantities { appendEncodable(quantity) }
        }

        /// Appends `quantity` (its offset not before the last one's), re-encoding the series when
        /// its scale or flags cannot hold it.
        mutating func append(_ quantity: Quantity) {
            let fitsScale = scale == QuantitySeriesEncoding.rawScale || QuantitySeriesEncoding.isExact(quantity.value, scale: Int(scale))
            if fitsScale, durations || quantity.duration == 0 {
                appendEncodable(quantity)
                return
            }
            // A once-per-series cost: the quantities so far, decoded from the bytes written here.
            let earlier = (try? QuantitySeriesEncoding.decode(bytes)) ?? []
            self = Appender(
                scale: QuantitySeriesEncoding.commonScale(of: earlier.map(\.value) + [quantity.value]),
                durations: durations || quantity.duration != 0)
            for old in earlier { appendEncodable(old) }
            appendEncodable(quantity)
        }

        /// Appends a quantity the scale and flags hold.
        fileprivate mutating func appendEncodable(_ quantity: Quantity) {
            if count > 0 {
                let step = quantity.offset &- lastOffset
                SeriesBytes.appendVarint(SeriesBytes.zigzag(step &- lastStep), to: &bytes)
                lastStep = step
            }
            lastOffset = quantity.offset
            if durations { SeriesBytes.appendVarint(UInt64(bitPattern: quantity.duration), to: &bytes) }
            if scale == QuantitySeriesEncoding.rawScale {
                SeriesBytes.appendWord(quantity.value.bitPattern, to: &bytes)
            } else {
                let scaled = Int64((quantity.value * Double(QuantitySeriesEncoding.powerOfTen(Int(scale)))).rounded())
                SeriesBytes.appendVarint(SeriesBytes.zigzag(scaled &- lastScaled), to: &bytes)
                lastScaled = scaled
            }
            count += 1
            rewriteCount()
        }

        /// The count after the header, as a varint: rewritten when its length grows.
        private mutating func rewriteCount() {
            var encoded: [UInt8] = []
            SeriesBytes.appendVarint(UInt64(count), to: &encoded)
            var previous: [UInt8] = []
            SeriesBytes.appendVarint(UInt64(count - 1), to: &previous)
            bytes.replaceSubrange(Self.headerLength..<(Self.headerLength + previous.count), with: encoded)
        }
    }
}

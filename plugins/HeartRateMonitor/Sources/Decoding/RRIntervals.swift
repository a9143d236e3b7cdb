/// The RR intervals of one Heart Rate Measurement, oldest first, in the spec's raw unit (1/1024 s).
///
/// A collection of `UInt16` like an array, but the first 12 values are stored inline: a 20-byte
/// payload (the default ATT MTU) holds at most 9 intervals, so decoding a typical payload
/// allocates nothing. More values (a larger MTU) move to an array. Allocating the RR list was the
/// decoder's main cost (Benchmarks/RESULTS.md, "Decoding").
public struct RRIntervals: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral,
    CustomStringConvertible
{
    /// How many values fit inline: four per word.
    static let inlineCapacity = 12

    private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
    /// Every value, once there are more than ``inlineCapacity``; nil until then.
    private var spilled: [UInt16]?
    public private(set) var count = 0

    /// No intervals.
    public init() {}

    /// The intervals of `values`, in order.
    public init(_ values: some Sequence<UInt16>) {
        for value in values { append(value) }
    }

    public init(arrayLiteral elements: UInt16...) {
        self.init(elements)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> UInt16 {
        precondition(position >= 0 && position < count, "RR interval index out of range")
        if let spilled { return spilled[position] }
        let shift = UInt64(position % 4 * 16)
        let word = switch position / 4 {
        case 0: words.0
        case 1: words.1
        default: words.2
        }
        return UInt16(truncatingIfNeeded: word >> shift)
    }

    /// Adds an interval at the end.
    public mutating func append(_ value: UInt16) {
        if spilled != nil {
            spilled?.append(value)
        } else if count < Self.inlineCapacity {
            let bits = UInt64(value) << UInt64(count % 4 * 16)
            switch count / 4 {
            case 0: words.0 |= bits
            case 1: words.1 |= bits
            default: words.2 |= bits
            }
        } else {
            spilled = Array(self) + [value]
        }
        count += 1
    }

    public static func == (lhs: RRIntervals, rhs: RRIntervals) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for value in self { hasher.combine(value) }
    }

    public var description: String { Array(self).description }
}

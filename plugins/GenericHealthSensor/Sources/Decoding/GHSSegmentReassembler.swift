/// Joins the segments of Live Health Observations (0x2B8B) and Stored Health Observations
/// (0x2BDD) notifications and indications into whole objects.
///
/// Each value starts with a segmentation header octet: bit 0 first segment, bit 1 last
/// segment, bits 2–7 a rolling counter (0…63) that goes up by one per segment, modulo 64, and
/// continues from one object to the next (Philips' `asBLEDataSegments` and STMicroelectronics'
/// `ghsapp_send_segment` both keep it across objects). A value with both bits set is a whole
/// object.
///
/// A value type: one per characteristic per connection, owned by whoever reads the
/// notifications; a new connection starts a new one. No clock: a segment that never comes is
/// noticed when the next one arrives. Bounded: an object longer than ``maximumObjectSize`` is
/// dropped, not buffered.
///
/// Each object lost is said once (``Outcome/dropped(_:)``, by its first cause), whatever its
/// number of segments: its later segments, and a segment of it that arrives after a newer one
/// (swapped), are ``Outcome/discarded``.
public struct GHSSegmentReassembler: Hashable, Sendable {
    /// What became of a segment, or of the object it belonged to.
    public enum Outcome: Hashable, Sendable {
        /// The segment completed an object: its bytes, without segmentation headers.
        case complete([UInt8])
        /// The segment was kept; the object needs more.
        case needMore
        /// The segment, or the object pending, was dropped: one object lost.
        case dropped(DropReason)
        /// The segment belongs to an object already dropped: nothing more is lost.
        case discarded
    }

    /// Why a segment or a pending object was dropped; ``name`` is stable, for counters.
    public enum DropReason: String, Hashable, Sendable, CaseIterable {
        /// A value with no segmentation header.
        case emptySegment
        /// A continuation with no first segment before it (the first was lost, or the
        /// connection began mid-object); the object's later segments are dropped alike.
        case missingFirstSegment
        /// The counter skipped: a segment was lost or reordered. The pending object is dropped,
        /// and so are the object's later segments; a first segment starts a new object.
        case outOfOrder
        /// A first segment, in sequence, while an object was pending: the sensor gave up on the
        /// pending one, which is dropped.
        case interrupted
        /// The object grew past ``GHSSegmentReassembler/maximumObjectSize``; its later
        /// segments are dropped alike.
        case tooLarge

        /// The stable name: `emptySegment`, `missingFirstSegment`, `outOfOrder`, `interrupted`,
        /// `tooLarge`.
        public var name: String { rawValue }
    }

    /// What the reassembler is doing between segments.
    enum State: Hashable, Sendable {
        /// No object started.
        case idle
        /// An object's bytes so far.
        case collecting([UInt8])
        /// Dropping the rest of an object, for this reason, until its last segment.
        case skipping(DropReason)
    }

    /// The largest object kept, in bytes (segmentation headers not counted).
    public let maximumObjectSize: Int
    /// The counter of the newest segment (a late one does not move it back), nil before the first.
    private(set) var lastCounter: UInt8?
    /// The counter of the current object's first segment.
    private(set) var objectStart: UInt8 = 0
    /// The first counter of the object dropped last, until an object completes: a segment
    /// between it and the newest arriving late is a part of that object.
    private(set) var droppedFrom: UInt8?
    private(set) var state = State.idle

    /// A reassembler that drops objects over `maximumObjectSize` bytes (64 KiB by default).
    public init(maximumObjectSize: Int = 64 * 1024) {
        self.maximumObjectSize = maximumObjectSize
    }

    /// Whether an object is partly received.
    public var isCollecting: Bool {
        if case .collecting = state { true } else { false }
    }

    /// Takes one characteristic value and says what became of it.
    ///
    /// - Returns: one outcome for the segment (`.complete`, `.needMore`, `.dropped` or
    ///   `.discarded`), preceded by `.dropped(.interrupted)` or `.dropped(.outOfOrder)` when a
    ///   first segment ends an object that was pending: a sensor that starts over after a lost
    ///   segment sends both a drop and, often, a whole new object in one value.
    public mutating func receive(_ value: [UInt8]) -> [Outcome] {
        guard let header = value.first else { return [.dropped(.emptySegment)] }
        let isFirst = header & 0x01 != 0
        let isLast = header & 0x02 != 0
        let counter = header >> 2
        if let low = droppedFrom, let newest = lastCounter, (counter &- low) & 0x3F < (newest &- low) & 0x3F {
            // Sent before the newest segment, arriving after it, by the counters of the object
            // dropped last: a part of that object, lost already.
            return [.discarded]
        }
        let inSequence = lastCounter.map { counter == ($0 + 1) & 0x3F } ?? true
        lastCounter = counter
        let payload = value.dropFirst()

        if isFirst {
            var outcomes: [Outcome] = []
            if case .collecting = state {
                droppedFrom = objectStart
                outcomes.append(.dropped(inSequence ? .interrupted : .outOfOrder))
            }
            objectStart = counter
            state = .collecting([])
            outcomes.append(append(payload, isLast: isLast))
            return outcomes
        }
        switch state {
        case .idle:
            // Its first segment never came, or comes next (swapped): one counter back.
            return [drop(.missingFirstSegment, from: (counter &- 1) & 0x3F, isLast: isLast)]
        case .skipping:
            if isLast { state = .idle }
            return [.discarded]
        case .collecting:
            guard inSequence else { return [drop(.outOfOrder, from: objectStart, isLast: isLast)] }
            return [append(payload, isLast: isLast)]
        }
    }

    /// Drops the object whose first counter is `low` for `reason`: its later segments, and any
    /// of its counters that arrive late, are discarded.
    private mutating func drop(_ reason: DropReason, from low: UInt8, isLast: Bool) -> Outcome {
        droppedFrom = low
        state = isLast ? .idle : .skipping(reason)
        return .dropped(reason)
    }

    /// Adds a segment's payload to the object being collected.
    private mutating func append(_ payload: ArraySlice<UInt8>, isLast: Bool) -> Outcome {
        guard case .collecting(var bytes) = state else { return .dropped(.missingFirstSegment) }
        guard bytes.count + payload.count <= maximumObjectSize else { return drop(.tooLarge, from: objectStart, isLast: isLast) }
        // Release the state's copy first, so that appending does not copy the buffer.
        state = .idle
        bytes.append(contentsOf: payload)
        if isLast {
            droppedFrom = nil
            return .complete(bytes)
        }
        state = .collecting(bytes)
        return .needMore
    }
}

extension GHSSegmentReassembler {
    /// The values a sensor sends for `object`: `payloadSize` bytes (at least 1) of it per value
    /// after the segmentation header, counters from `firstCounter` on (modulo 64). What a
    /// simulated sensor sends, and what tests feed ``receive(_:)``.
    public static func segments(of object: [UInt8], payloadSize: Int, firstCounter: UInt8) -> [[UInt8]] {
        let size = max(1, payloadSize)
        let starts = Array(stride(from: 0, to: max(object.count, 1), by: size))
        return starts.enumerated().map { index, start in
            let counter = (Int(firstCounter) + index) & 0x3F
            let header = UInt8(counter << 2) | (index == 0 ? 0x01 : 0) | (index == starts.count - 1 ? 0x02 : 0)
            return [header] + object[start..<min(start + size, object.count)]
        }
    }
}

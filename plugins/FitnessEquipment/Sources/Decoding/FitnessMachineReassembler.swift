/// Joins Fitness Machine data records that a machine splits across several notifications.
///
/// FTMS v1.0 lets a server split one record (all the fields of one moment) across notifications
/// when it does not fit the ATT MTU: every part but the last has flags bit 0 ("More Data") set,
/// and the last part has it clear and so carries the fields of bit 0 (instantaneous speed, or
/// stroke rate and count). Each part's flags announce only the fields in that part.
///
/// The rule, applied to each decoded notification in arrival order:
/// 1. A part whose field bits (bits 1–15) overlap the pending record's cannot belong to it: the
///    pending record lost its last part, so it is emitted as ``Record/isComplete`` false and
///    the new part starts a new record. Machines that set More Data on every notification and
///    never send a last part (seen in the field) still deliver every field this way, one
///    notification late.
/// 2. A part with bit 0 set is merged into the pending record.
/// 3. A part with bit 0 clear is merged and the record is emitted, complete.
/// 4. A pending record never holds more than ``maximumParts`` parts; the part that would exceed
///    it emits the pending record as incomplete first. Parts that announce no field at all
///    (flags 0x0001 alone) carry nothing and only count as parts.
/// 5. ``flush()`` emits a pending record as incomplete: call it when the link drops.
///
/// A field appears at most once per record by rule 1, so merging never overwrites a value.
/// Pure: no clock and no I/O; the caller decides when to flush.
public struct FitnessMachineReassembler: Sendable {
    /// One reassembled record.
    public struct Record: Hashable, Sendable {
        /// Every field of every part. Its flags are the union of the parts' field bits, with
        /// bit 0 clear when the last part arrived.
        public var data: FitnessMachineData
        /// Whether the part with More Data clear arrived.
        public var isComplete: Bool
        /// How many notifications the record was joined from.
        public var parts: Int

        /// Creates a record.
        public init(data: FitnessMachineData, isComplete: Bool, parts: Int) {
            self.data = data
            self.isComplete = isComplete
            self.parts = parts
        }
    }

    /// The layout every part is decoded with.
    public let layout: FitnessMachineLayout
    /// The most parts one record may have.
    public let maximumParts: Int
    private var pending: FitnessMachineData?
    private var pendingParts = 0

    /// Creates a reassembler for one characteristic of one device.
    /// - Parameter maximumParts: at least 1; the default, 13, is one part per flag bit.
    public init(layout: FitnessMachineLayout, maximumParts: Int = 13) {
        self.layout = layout
        self.maximumParts = max(1, maximumParts)
    }

    /// Whether parts are waiting for their record's last part.
    public var hasPending: Bool { pending != nil }

    /// Decodes one notification and returns the records it finishes (zero, one, or two when it
    /// both evicts an incomplete record and completes its own).
    /// - Throws: ``FitnessDecodingError`` when the notification does not decode; the pending
    ///   record is kept, so one bad part does not lose the parts around it.
    public mutating func append(_ payload: [UInt8]) throws(FitnessDecodingError) -> [Record] {
        let part = try FitnessMachineDataDecoder.decode(payload, layout: layout)
        return append(part)
    }

    /// Adds one decoded part; see ``append(_:)-([UInt8])``.
    public mutating func append(_ part: FitnessMachineData) -> [Record] {
        var finished: [Record] = []
        let fieldBits = layout.fieldBits
        if let current = pending,
            current.flags & part.flags & fieldBits != 0 || pendingParts >= maximumParts
        {
            finished.append(Record(data: current, isComplete: false, parts: pendingParts))
            pending = nil
            pendingParts = 0
        }
        var merged = pending ?? FitnessMachineData(characteristic: part.characteristic, flags: 1, raw: [:])
        merged.flags |= part.flags & fieldBits
        merged.raw.merge(part.raw) { _, new in new }
        pendingParts += 1
        if part.moreData {
            pending = merged
        } else {
            merged.flags &= ~1
            finished.append(Record(data: merged, isComplete: true, parts: pendingParts))
            pending = nil
            pendingParts = 0
        }
        return finished
    }

    /// Emits the pending record as incomplete, if there is one.
    public mutating func flush() -> Record? {
        defer {
            pending = nil
            pendingParts = 0
        }
        return pending.map { Record(data: $0, isComplete: false, parts: pendingParts) }
    }
}

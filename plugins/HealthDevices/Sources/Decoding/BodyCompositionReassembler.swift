/// Joins Body Composition Measurement records that a device splits across indications.
///
/// A Body Composition Measurement value with every field is 30 octets, more than the 20 one
/// indication carries at the default ATT MTU of 23, so the Body Composition Service lets a
/// device send one record in several indications, each with the Multiple Packet Measurement
/// flag (bit 12) set. Each part is a complete value of its own (flags, the mandatory body fat
/// percentage, then the fields its flags announce); two parts always suffice.
///
/// The rule, applied to each indication in arrival order:
/// 1. A part without the Multiple Packet flag is a record on its own. A pending record that
///    still waits for its second part is emitted first, as ``Record/isComplete`` false.
/// 2. A part with the flag joins the pending record unless it cannot belong to it: it announces
///    a field the pending record already has (basal metabolism to height), or its time stamp or
///    user differs from the pending record's. Then the pending record is emitted incomplete and
///    the part starts a new one.
/// 3. A record is complete with its ``partsPerRecord``-th part.
/// 4. ``flush()`` emits a pending record as incomplete: call it when the link drops.
///
/// The caller stores only complete records: an incomplete one is reported, never stored half.
/// Pure: no clock and no I/O.
public struct BodyCompositionReassembler: Sendable {
    /// One reassembled record.
    public struct Record: Hashable, Sendable {
        /// Every field of every part; the body fat percentage, time stamp and user of the first.
        public var measurement: BodyCompositionMeasurement
        /// Whether every part arrived.
        public var isComplete: Bool
        /// The payloads the record was joined from, in arrival order.
        public var payloads: [[UInt8]]

        public init(measurement: BodyCompositionMeasurement, isComplete: Bool, payloads: [[UInt8]]) {
            self.measurement = measurement
            self.isComplete = isComplete
            self.payloads = payloads
        }
    }

    /// How many indications carry one record with the Multiple Packet flag.
    public let partsPerRecord: Int
    private var pending: Record?

    /// Creates a reassembler for one device.
    /// - Parameter partsPerRecord: at least 2; the default, 2, is what the largest value needs.
    public init(partsPerRecord: Int = 2) {
        self.partsPerRecord = max(2, partsPerRecord)
    }

    /// Whether a part waits for the rest of its record.
    public var hasPending: Bool { pending != nil }

    /// Decodes one indication and returns the records it finishes: zero, one, or two when it
    /// both evicts an incomplete record and completes its own.
    /// - Throws: ``HealthDecodingError`` when the indication does not decode; the pending record
    ///   is kept, so one bad part does not lose the parts around it.
    public mutating func append(_ payload: [UInt8]) throws(HealthDecodingError) -> [Record] {
        let part = try BodyCompositionMeasurementDecoder.decode(payload)
        var finished: [Record] = []
        guard part.isMultiplePacket else {
            if let evicted = flush() { finished.append(evicted) }
            finished.append(Record(measurement: part, isComplete: true, payloads: [payload]))
            return finished
        }
        if let current = pending, !Self.belong(part, to: current.measurement) {
            finished.append(current)
            pending = nil
        }
        var record = Record(measurement: part, isComplete: false, payloads: [payload])
        if let current = pending {
            record = Record(
                measurement: Self.merge(part, into: current.measurement), isComplete: false, payloads: current.payloads + [payload])
        }
        if record.payloads.count >= partsPerRecord {
            record.isComplete = true
            finished.append(record)
            pending = nil
        } else {
            pending = record
        }
        return finished
    }

    /// Emits the pending record as incomplete, if there is one.
    public mutating func flush() -> Record? {
        defer { pending = nil }
        return pending
    }

    /// Whether `part` can be another part of the record `record` has so far.
    static func belong(_ part: BodyCompositionMeasurement, to record: BodyCompositionMeasurement) -> Bool {
        let fields = BodyCompositionMeasurementDecoder.measurementFieldBits
        if part.flags & record.flags & fields != 0 { return false }
        let stamp = BodyCompositionMeasurementDecoder.timestampPresent
        if part.flags & record.flags & stamp != 0, part.timestamp != record.timestamp { return false }
        let user = BodyCompositionMeasurementDecoder.userIDPresent
        if part.flags & record.flags & user != 0, part.userID != record.userID { return false }
        return true
    }

    /// The record with the fields `part` adds.
    static func merge(_ part: BodyCompositionMeasurement, into record: BodyCompositionMeasurement) -> BodyCompositionMeasurement {
        var merged = record
        merged.flags |= part.flags & ~BodyCompositionMeasurementDecoder.imperialUnits
        merged.bodyFatPercentage = record.bodyFatPercentage ?? part.bodyFatPercentage
        merged.timestamp = record.timestamp ?? part.timestamp
        if record.flags & BodyCompositionMeasurementDecoder.userIDPresent == 0 { merged.userID = part.userID }
        merged.basalMetabolism = record.basalMetabolism ?? part.basalMetabolism
        merged.musclePercentage = record.musclePercentage ?? part.musclePercentage
        merged.muscleMass = record.muscleMass ?? part.muscleMass
        merged.fatFreeMass = record.fatFreeMass ?? part.fatFreeMass
        merged.softLeanMass = record.softLeanMass ?? part.softLeanMass
        merged.bodyWaterMass = record.bodyWaterMass ?? part.bodyWaterMass
        merged.impedance = record.impedance ?? part.impedance
        merged.weight = record.weight ?? part.weight
        merged.height = record.height ?? part.height
        return merged
    }
}

import FoundationEssentials

/// The records a simulated glucose meter keeps: ``storedAtStart`` when the transport is made
/// (sequence numbers 1…, one interval apart, the last taken at that moment), then one more every
/// interval. Derived from the clock alone, so every connection to the meter sees the same
/// records, as a real meter's memory outlives its links. Sequence numbers are uint16: a meter
/// whose memory reaches 65535 takes no more records.
struct SimulatedGlucoseMemory: Sendable {
    /// The records a meter holds when the transport is made.
    static let storedAtStart = 3
    /// The highest sequence number (uint16).
    static let lastSequenceNumber = 0xFFFF

    /// When record ``storedAtStart`` is taken: when the transport is made.
    let origin: Date
    let periodSeconds: Double

    /// When record `sequence` is taken.
    func takenAt(_ sequence: Int) -> Date {
        origin.addingTimeInterval(Double(sequence - Self.storedAtStart) * periodSeconds)
    }

    /// Glucose Measurement record `sequence` of meter `index`, stamped with the meter's clock
    /// when it was taken.
    func record(_ sequence: Int, meter index: Int) -> [UInt8] {
        SimulatedHealthReading(index: index, count: sequence).glucosePayload(takenAt: takenAt(sequence))
    }

    /// The sequence number of the newest record at `now`.
    func lastSequence(at now: Date) -> Int {
        // The tolerance keeps a record taken exactly now (the clock woke at its time) stored.
        let taken = Int((now.timeIntervalSince(origin) / periodSeconds + 1e-9).rounded(.down))
        return min(Self.lastSequenceNumber, Self.storedAtStart + taken)
    }

    /// The answer to a Record Access Control Point `request` at `now`: the sequence numbers of the
    /// records to send, then the response (op code 0x06, operator 0x00, the request's op code and
    /// a response code). "Report stored records" (0x01) of all records (operator 0x01) or of
    /// those whose sequence number (filter type 0x01) is at least n (operator 0x03) answers
    /// success (0x01) after the records, or "no records found" (0x06); another op code is "op
    /// code not supported" (0x02), another operator "operator not supported" (0x04), another
    /// filter or operand "operand not supported" (0x09).
    func answer(_ request: [UInt8], at now: Date) -> (sequences: [Int], response: [UInt8]) {
        let opCode = request.first ?? 0
        guard opCode == 0x01 else { return ([], [0x06, 0x00, opCode, 0x02]) }
        let first: Int
        switch request.dropFirst().first {
        case 0x01 where request.count == 2:
            first = 1
        case 0x03 where request.count == 5 && request[2] == 0x01:
            first = max(1, Int(UInt16(request[3]) | UInt16(request[4]) << 8))
        case 0x01, 0x03:
            return ([], [0x06, 0x00, opCode, 0x09])
        default:
            return ([], [0x06, 0x00, opCode, 0x04])
        }
        let last = lastSequence(at: now)
        guard first <= last else { return ([], [0x06, 0x00, opCode, 0x06]) }
        return (Array(first...last), [0x06, 0x00, opCode, 0x01])
    }
}

/// The two control points a CGM collector writes: the Specific Ops Control Point (0x2AAC, CGMS
/// 1.0.1 §3.6) for the session and the communication interval, and the Record Access Control
/// Point (0x2A52, §3.5 and the Glucose Profile's RACP) for stored records, filtered by time
/// offset (filter type 0x01).
public enum CGMControlPoint {
    /// A Specific Ops Control Point request.
    public enum Request: Hashable, Sendable {
        /// Op code 0x01: send a measurement every `minutes` (1…254; 255: as fast as it can).
        case setCommunicationInterval(minutes: UInt8)
        /// Op code 0x1A.
        case startSession
        /// Op code 0x1B.
        case stopSession

        /// The op code.
        public var opCode: UInt8 {
            switch self {
            case .setCommunicationInterval: 0x01
            case .startSession: 0x1A
            case .stopSession: 0x1B
            }
        }

        /// The value to write: op code and operand, with an E2E-CRC when the sensor wants one.
        public func value(e2e: Bool) -> [UInt8] {
            var bytes = [opCode]
            if case .setCommunicationInterval(let minutes) = self { bytes.append(minutes) }
            return e2e ? E2ECRC.appending(to: bytes) : bytes
        }

        /// What it does, for a log line.
        public var summary: String {
            switch self {
            case .setCommunicationInterval(let minutes): "set the communication interval to \(minutes) min"
            case .startSession: "start the session"
            case .stopSession: "stop the session"
            }
        }
    }

    /// A Specific Ops Control Point response: op code 0x1C, the request's op code and a response
    /// code (1 success, 2 op code not supported, 3 invalid operand, 4 procedure not completed,
    /// 5 parameter out of range), with an optional E2E-CRC. Nil for another value.
    public static func specificOpsResponse(_ bytes: [UInt8]) -> (request: UInt8, code: UInt8, e2e: E2EVerdict)? {
        switch bytes.count {
        case 3 where bytes[0] == 0x1C: return (bytes[1], bytes[2], .absent)
        case 5 where bytes[0] == 0x1C:
            return (bytes[1], bytes[2], E2EVerdict(sent: UInt16(bytes[3]) | UInt16(bytes[4]) << 8, over: bytes[0..<3]))
        default: return nil
        }
    }

    /// The Specific Ops response codes by value.
    public static func specificOpsCodeName(_ code: UInt8) -> String {
        switch code {
        case 1: "success"
        case 2: "op code not supported"
        case 3: "invalid operand"
        case 4: "procedure not completed"
        case 5: "parameter out of range"
        default: "response code \(code)"
        }
    }

    /// "Report stored records" (op code 0x01): every record (operator 0x01) when `first` is nil,
    /// else those whose time offset (filter type 0x01) is at least `first` (operator 0x03).
    public static func reportRecords(fromTimeOffset first: Int?) -> [UInt8] {
        guard let first, (0...0xFFFF).contains(first) else { return [0x01, 0x01] }
        return [0x01, 0x03, 0x01, UInt8(first & 0xFF), UInt8(first >> 8)]
    }

    /// A Record Access Control Point response (op code 0x06, operator 0x00, the request's op
    /// code, a response code), for a log line; nil for another value.
    public static func recordAccessResponse(_ bytes: [UInt8]) -> (request: UInt8, code: UInt8)? {
        guard bytes.count == 4, bytes[0] == 0x06, bytes[1] == 0x00 else { return nil }
        return (bytes[2], bytes[3])
    }

    /// The Record Access response codes by value.
    public static func recordAccessCodeName(_ code: UInt8) -> String {
        switch code {
        case 1: "success"
        case 2: "op code not supported"
        case 3: "invalid operator"
        case 4: "operator not supported"
        case 5: "invalid operand"
        case 6: "no records found"
        case 7: "abort unsuccessful"
        case 8: "procedure not completed"
        case 9: "operand not supported"
        default: "response code \(code)"
        }
    }
}

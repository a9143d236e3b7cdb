public import GATTDecoding

/// The Record Access Control Point (0x2A52) as GHS uses it: stored observations are selected by
/// record number (filter type 0x01, uint32), and counts are uint32. Op codes, operators and
/// response codes as STMicroelectronics' `ghs_racp.h` and Philips' `GhsRacpHandler` define
/// them; both send every response with the null operator (0x00) after the op code.
public enum GHSRecordAccessControlPoint {
    /// Which records a request is about.
    public enum Filter: Hashable, Sendable {
        /// Operator 0x01.
        case all
        /// Operator 0x03 (greater than or equal to), filter type 0x01: records numbered at
        /// least this.
        case from(recordNumber: UInt32)
        /// Operator 0x02 (less than or equal to), filter type 0x01: records numbered at most
        /// this.
        case through(recordNumber: UInt32)

        /// The operator and operand.
        var encoded: [UInt8] {
            switch self {
            case .all: [0x01]
            case .from(let number): [0x03, 0x01] + GHSEncoding.littleEndian(number)
            case .through(let number): [0x02, 0x01] + GHSEncoding.littleEndian(number)
            }
        }
    }

    /// What the gateway asks.
    public enum Request: Hashable, Sendable {
        /// Op code 0x01: send the records on Stored Health Observations, then a response code.
        case reportRecords(Filter)
        /// Op code 0x02: delete the records.
        case deleteRecords(Filter)
        /// Op code 0x03 with the null operator: stop the procedure in progress.
        case abort
        /// Op code 0x04: answer with how many records there are (op code 0x05).
        case reportNumberOfRecords(Filter)
        /// Op code 0x07: send the records, then how many were sent (op code 0x08).
        case combinedReport(Filter)

        /// The op code.
        public var opCode: UInt8 {
            switch self {
            case .reportRecords: 0x01
            case .deleteRecords: 0x02
            case .abort: 0x03
            case .reportNumberOfRecords: 0x04
            case .combinedReport: 0x07
            }
        }

        /// What it asks, for a log line: `report the records from record 12`.
        public var summary: String {
            func which(_ filter: Filter) -> String {
                switch filter {
                case .all: "every record"
                case .from(let number): "the records from record \(number)"
                case .through(let number): "the records through record \(number)"
                }
            }
            switch self {
            case .reportRecords(let filter): return "report \(which(filter))"
            case .deleteRecords(let filter): return "delete \(which(filter))"
            case .abort: return "abort"
            case .reportNumberOfRecords(let filter): return "count \(which(filter))"
            case .combinedReport(let filter): return "report \(which(filter)) and their number"
            }
        }

        /// The value to write: op code, operator and operand.
        public var encoded: [UInt8] {
            switch self {
            case .abort: [opCode, 0x00]
            case .reportRecords(let filter), .deleteRecords(let filter), .reportNumberOfRecords(let filter),
                .combinedReport(let filter):
                [opCode] + filter.encoded
            }
        }
    }

    /// A response code (op code 0x06), kept as sent; the named ones are those GHS defines.
    public struct ResponseCode: RawRepresentable, Hashable, Sendable {
        /// The octet as sent.
        public var rawValue: UInt8
        /// The code `rawValue`, named or not.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 0x01.
        public static let success = ResponseCode(rawValue: 0x01)
        /// 0x02.
        public static let opCodeNotSupported = ResponseCode(rawValue: 0x02)
        /// 0x03.
        public static let invalidOperator = ResponseCode(rawValue: 0x03)
        /// 0x04.
        public static let operatorNotSupported = ResponseCode(rawValue: 0x04)
        /// 0x05.
        public static let invalidOperand = ResponseCode(rawValue: 0x05)
        /// 0x06.
        public static let noRecordsFound = ResponseCode(rawValue: 0x06)
        /// 0x07.
        public static let abortUnsuccessful = ResponseCode(rawValue: 0x07)
        /// 0x08.
        public static let procedureNotCompleted = ResponseCode(rawValue: 0x08)
        /// 0x09.
        public static let operandNotSupported = ResponseCode(rawValue: 0x09)
        /// Both published sensors define 0x0A for a procedure refused while another runs.
        public static let serverBusy = ResponseCode(rawValue: 0x0A)

        /// A stable name for logs: `success`, …, `responseCode11` for one not defined.
        public var name: String {
            let names = [
                "success", "opCodeNotSupported", "invalidOperator", "operatorNotSupported", "invalidOperand",
                "noRecordsFound", "abortUnsuccessful", "procedureNotCompleted", "operandNotSupported", "serverBusy",
            ]
            return (1...names.count).contains(Int(rawValue)) ? names[Int(rawValue) - 1] : "responseCode\(rawValue)"
        }
    }

    /// What the sensor indicates.
    public enum Indication: Hashable, Sendable, CustomStringConvertible {
        /// Op code 0x05: how many records match the request.
        case numberOfRecords(UInt32)
        /// Op code 0x06: how the request with this op code ended.
        case response(request: UInt8, code: ResponseCode)
        /// Op code 0x08: how many records a combined report sent.
        case combinedReportResponse(recordsSent: UInt32)

        /// For logs: `number of records: 5`, `op code 0x01: success`, `combined report sent 5 records`.
        public var description: String {
            switch self {
            case .numberOfRecords(let count): "number of records: \(count)"
            case .response(let request, let code): "op code 0x\(String(request, radix: 16, uppercase: true)): \(code.name)"
            case .combinedReportResponse(let count): "combined report sent \(count) record\(count == 1 ? "" : "s")"
            }
        }
    }

    /// Decodes an indication: op code, the null operator, and the operand.
    /// - Throws: `.truncated` when the value ends early, `.reservedValue` for another op code or
    ///   a non-null operator, `.unexpectedLength` for bytes after the operand.
    public static func indication(_ bytes: [UInt8]) throws(GHSDecodingError) -> Indication {
        var reader = GATTPayloadReader(bytes, GHSCharacteristic.recordAccessControlPoint)
        let opCode = try reader.uint8("opCode")
        guard [0x05, 0x06, 0x08].contains(opCode) else {
            throw GHSDecodingError(
                .reservedValue, characteristic: .recordAccessControlPoint, field: "opCode", offset: 0, needed: 1,
                available: bytes.count, value: Int(opCode))
        }
        let `operator` = try reader.uint8("operator")
        guard `operator` == 0 else {
            throw GHSDecodingError(
                .reservedValue, characteristic: .recordAccessControlPoint, field: "operator", offset: 1, needed: 1,
                available: bytes.count - 1, value: Int(`operator`))
        }
        let indication: Indication
        switch opCode {
        case 0x05: indication = .numberOfRecords(try reader.uint32("numberOfRecords"))
        case 0x08: indication = .combinedReportResponse(recordsSent: try reader.uint32("numberOfRecords"))
        default:
            let request = try reader.uint8("requestOpCode")
            indication = .response(request: request, code: ResponseCode(rawValue: try reader.uint8("responseCode")))
        }
        try reader.expectEnd()
        return indication
    }
}

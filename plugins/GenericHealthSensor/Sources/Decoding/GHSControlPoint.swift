public import GATTDecoding

/// The GHS Control Point (0x2BF4): the gateway writes a request, the sensor indicates a
/// response. Op codes as STMicroelectronics' `ghs_cp.h` and Philips' `GhsControlPointHandler`
/// define them.
public enum GHSControlPoint {
    /// What the gateway asks.
    public enum Request: UInt8, Hashable, Sendable, CaseIterable {
        /// Start sending Live Health Observations.
        case startSendingLiveObservations = 0x01
        /// Stop sending Live Health Observations.
        case stopSendingLiveObservations = 0x02

        /// The value to write: the op code.
        public var encoded: [UInt8] { [rawValue] }

        /// What it does, for a log line.
        public var summary: String {
            switch self {
            case .startSendingLiveObservations: "start sending live observations"
            case .stopSendingLiveObservations: "stop sending live observations"
            }
        }
    }

    /// What the sensor answers.
    public enum Response: UInt8, Hashable, Sendable, CaseIterable {
        case success = 0x80
        case serverBusy = 0x81
        case errorInLiveObservations = 0x82

        /// The name for logs: the case's name.
        public var name: String { "\(self)" }
    }

    /// Decodes an indication: one op code.
    /// - Throws: `.truncated` for an empty value, `.reservedValue` for another op code,
    ///   `.unexpectedLength` for bytes after it.
    public static func response(_ bytes: [UInt8]) throws(GHSDecodingError) -> Response {
        var reader = GATTPayloadReader(bytes, GHSCharacteristic.controlPoint)
        let code = try reader.uint8("opCode")
        guard let response = Response(rawValue: code) else {
            throw GHSDecodingError(
                .reservedValue, characteristic: .controlPoint, field: "opCode", offset: 0, needed: 1, available: bytes.count,
                value: Int(code))
        }
        try reader.expectEnd()
        return response
    }
}

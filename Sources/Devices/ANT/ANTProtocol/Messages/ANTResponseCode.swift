/// The code of a channel response or channel event (message 0x40; "ANT Message Protocol and
/// Usage", §9.5.6.1). A struct, not an enumeration, so a code this table does not know still
/// travels (its ``name`` says `code 0xNN`).
public struct ANTResponseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code's byte.
    public var rawValue: UInt8

    /// A code from its byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// RESPONSE_NO_ERROR: the command was accepted.
    public static let noError = Self(rawValue: 0x00)
    /// EVENT_RX_SEARCH_TIMEOUT: a paired channel found nothing in its search time.
    public static let rxSearchTimeout = Self(rawValue: 0x01)
    /// EVENT_RX_FAIL: a paired channel missed one message.
    public static let rxFail = Self(rawValue: 0x02)
    /// EVENT_TX.
    public static let tx = Self(rawValue: 0x03)
    /// EVENT_TRANSFER_RX_FAILED.
    public static let transferRxFailed = Self(rawValue: 0x04)
    /// EVENT_TRANSFER_TX_COMPLETED.
    public static let transferTxCompleted = Self(rawValue: 0x05)
    /// EVENT_TRANSFER_TX_FAILED.
    public static let transferTxFailed = Self(rawValue: 0x06)
    /// EVENT_CHANNEL_CLOSED: the channel is closed (after a close command or a search timeout).
    public static let channelClosed = Self(rawValue: 0x07)
    /// EVENT_RX_FAIL_GO_TO_SEARCH: a paired channel lost its device and searches again.
    public static let rxFailGoToSearch = Self(rawValue: 0x08)
    /// EVENT_CHANNEL_COLLISION.
    public static let channelCollision = Self(rawValue: 0x09)
    /// EVENT_TRANSFER_TX_START.
    public static let transferTxStart = Self(rawValue: 0x0A)
    /// CHANNEL_IN_WRONG_STATE: the command does not fit the channel's state.
    public static let channelInWrongState = Self(rawValue: 0x15)
    /// CHANNEL_NOT_OPENED.
    public static let channelNotOpened = Self(rawValue: 0x16)
    /// CHANNEL_ID_NOT_SET.
    public static let channelIDNotSet = Self(rawValue: 0x18)
    /// CLOSE_ALL_CHANNELS: scan mode needs every other channel closed.
    public static let closeAllChannels = Self(rawValue: 0x19)
    /// TRANSFER_IN_PROGRESS.
    public static let transferInProgress = Self(rawValue: 0x1F)
    /// TRANSFER_SEQUENCE_NUMBER_ERROR.
    public static let transferSequenceNumberError = Self(rawValue: 0x20)
    /// TRANSFER_IN_ERROR.
    public static let transferInError = Self(rawValue: 0x21)
    /// MESSAGE_SIZE_EXCEEDS_LIMIT.
    public static let messageSizeExceedsLimit = Self(rawValue: 0x27)
    /// INVALID_MESSAGE: the stick does not know the command or its parameters.
    public static let invalidMessage = Self(rawValue: 0x28)
    /// INVALID_NETWORK_NUMBER.
    public static let invalidNetworkNumber = Self(rawValue: 0x29)
    /// INVALID_LIST_ID.
    public static let invalidListID = Self(rawValue: 0x30)
    /// INVALID_SCAN_TX_CHANNEL.
    public static let invalidScanTxChannel = Self(rawValue: 0x31)
    /// INVALID_PARAMETER_PROVIDED.
    public static let invalidParameterProvided = Self(rawValue: 0x33)
    /// EVENT_SERIAL_QUE_OVERFLOW: the stick dropped messages the host did not read in time.
    public static let serialQueueOverflow = Self(rawValue: 0x34)
    /// EVENT_QUE_OVERFLOW.
    public static let queueOverflow = Self(rawValue: 0x35)
    /// NVM_FULL_ERROR.
    public static let nvmFullError = Self(rawValue: 0x40)
    /// NVM_WRITE_ERROR.
    public static let nvmWriteError = Self(rawValue: 0x41)
    /// USB_STRING_WRITE_FAIL.
    public static let usbStringWriteFail = Self(rawValue: 0x70)

    private static let names: [UInt8: String] = [
        0x00: "RESPONSE_NO_ERROR", 0x01: "EVENT_RX_SEARCH_TIMEOUT", 0x02: "EVENT_RX_FAIL", 0x03: "EVENT_TX",
        0x04: "EVENT_TRANSFER_RX_FAILED", 0x05: "EVENT_TRANSFER_TX_COMPLETED", 0x06: "EVENT_TRANSFER_TX_FAILED",
        0x07: "EVENT_CHANNEL_CLOSED", 0x08: "EVENT_RX_FAIL_GO_TO_SEARCH", 0x09: "EVENT_CHANNEL_COLLISION",
        0x0A: "EVENT_TRANSFER_TX_START", 0x15: "CHANNEL_IN_WRONG_STATE", 0x16: "CHANNEL_NOT_OPENED",
        0x18: "CHANNEL_ID_NOT_SET", 0x19: "CLOSE_ALL_CHANNELS", 0x1F: "TRANSFER_IN_PROGRESS",
        0x20: "TRANSFER_SEQUENCE_NUMBER_ERROR", 0x21: "TRANSFER_IN_ERROR", 0x27: "MESSAGE_SIZE_EXCEEDS_LIMIT",
        0x28: "INVALID_MESSAGE", 0x29: "INVALID_NETWORK_NUMBER", 0x30: "INVALID_LIST_ID",
        0x31: "INVALID_SCAN_TX_CHANNEL", 0x33: "INVALID_PARAMETER_PROVIDED", 0x34: "EVENT_SERIAL_QUE_OVERFLOW",
        0x35: "EVENT_QUE_OVERFLOW", 0x40: "NVM_FULL_ERROR", 0x41: "NVM_WRITE_ERROR", 0x70: "USB_STRING_WRITE_FAIL",
    ]

    /// The protocol document's name (`CHANNEL_IN_WRONG_STATE`), or `code 0xNN` for an unknown one.
    public var name: String {
        Self.names[rawValue] ?? "code 0x\(String(rawValue, radix: 16, uppercase: true))"
    }

    /// True for RESPONSE_NO_ERROR only.
    public var isSuccess: Bool { self == .noError }

    public var description: String { name }
}

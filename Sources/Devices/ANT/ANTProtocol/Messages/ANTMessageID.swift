/// The message ids healthgate speaks ("ANT Message Protocol and Usage", §9.3, the message
/// summary). A frame with another id decodes to ``ANTMessage/other(id:payload:)``.
public enum ANTMessageID: UInt8, Hashable, Sendable, CaseIterable {
    /// Channel response or channel event (stick → host).
    case channelResponse = 0x40
    /// Unassign channel.
    case unassignChannel = 0x41
    /// Assign channel.
    case assignChannel = 0x42
    /// Channel period (a paired channel's message rate).
    case channelPeriod = 0x43
    /// Search timeout (a paired channel's).
    case searchTimeout = 0x44
    /// Channel RF frequency.
    case channelRFFrequency = 0x45
    /// Set network key.
    case setNetworkKey = 0x46
    /// Reset system.
    case resetSystem = 0x4A
    /// Open channel.
    case openChannel = 0x4B
    /// Close channel.
    case closeChannel = 0x4C
    /// Request message: asks the stick to send one of its messages.
    case requestMessage = 0x4D
    /// Broadcast data (stick → host).
    case broadcastData = 0x4E
    /// Acknowledged data (stick → host): a strap does not send it; its data reads as a broadcast.
    case acknowledgedData = 0x4F
    /// Channel id: set (host → stick) or its value (stick → host, requested).
    case channelID = 0x51
    /// Channel status (stick → host, requested).
    case channelStatus = 0x52
    /// Capabilities (stick → host, requested).
    case capabilities = 0x54
    /// Open RX scan mode (continuous scan).
    case openRxScanMode = 0x5B
    /// Low-priority search timeout.
    case lowPrioritySearchTimeout = 0x63
    /// Lib config: which extended data the stick adds to received messages.
    case libConfig = 0x6E
    /// Startup message (stick → host, after power-up or a reset).
    case startup = 0x6F
    /// Serial error message (stick → host: it received a malformed frame).
    case serialError = 0xAE

    /// The name the protocol document uses, for error messages: `open RX scan mode (0x5B)`.
    public var commandName: String {
        let name =
            switch self {
            case .channelResponse: "channel response"
            case .unassignChannel: "unassign channel"
            case .assignChannel: "assign channel"
            case .channelPeriod: "channel period"
            case .searchTimeout: "search timeout"
            case .channelRFFrequency: "channel RF frequency"
            case .setNetworkKey: "set network key"
            case .resetSystem: "reset system"
            case .openChannel: "open channel"
            case .closeChannel: "close channel"
            case .requestMessage: "request message"
            case .broadcastData: "broadcast data"
            case .acknowledgedData: "acknowledged data"
            case .channelID: "channel id"
            case .channelStatus: "channel status"
            case .capabilities: "capabilities"
            case .openRxScanMode: "open RX scan mode"
            case .lowPrioritySearchTimeout: "low priority search timeout"
            case .libConfig: "lib config"
            case .startup: "startup message"
            case .serialError: "serial error"
            }
        return "\(name) (0x\(String(rawValue, radix: 16, uppercase: true)))"
    }

    /// The name of any message id, known or not.
    public static func name(of id: UInt8) -> String {
        ANTMessageID(rawValue: id)?.commandName ?? "message 0x\(String(id, radix: 16, uppercase: true))"
    }
}

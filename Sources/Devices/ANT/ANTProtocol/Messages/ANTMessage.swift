/// The ANT messages healthgate sends and receives, typed ("ANT Message Protocol and Usage", §9).
/// Each encodes to an ``ANTFrame`` and decodes from one; a frame with an id not listed here
/// decodes to ``other(id:payload:)``. Both directions are here so the simulated stick speaks
/// the same protocol as the source.
public enum ANTMessage: Hashable, Sendable {
    // MARK: Host → stick

    /// Reset system (0x4A): the stick answers with a startup message.
    case resetSystem
    /// Request message (0x4D): asks the stick to send message `messageID` (capabilities, a
    /// channel's id).
    case requestMessage(channel: UInt8, messageID: UInt8)
    /// Set network key (0x46).
    case setNetworkKey(network: UInt8, key: ANTNetworkKey)
    /// Assign channel (0x42): `type` 0x00 is a receive (slave) channel.
    case assignChannel(channel: UInt8, type: UInt8, network: UInt8)
    /// Channel period (0x43), in 1/32768 s (8070 for a heart-rate monitor).
    case channelPeriod(channel: UInt8, period: UInt16)
    /// Search timeout (0x44), in 2.5 s units; 255 never times out.
    case searchTimeout(channel: UInt8, timeout: UInt8)
    /// Low-priority search timeout (0x63), in 2.5 s units; 255 never times out.
    case lowPrioritySearchTimeout(channel: UInt8, timeout: UInt8)
    /// Channel RF frequency (0x45): 2400 + `frequency` MHz (57 for ANT+).
    case channelRFFrequency(channel: UInt8, frequency: UInt8)
    /// Lib config (0x6E): which extended data the stick adds (the ``ANTBroadcast`` flag bits).
    case libConfig(flags: UInt8)
    /// Open RX scan mode (0x5B): channel 0 receives every device on its frequency.
    case openRxScanMode
    /// Open channel (0x4B).
    case openChannel(channel: UInt8)
    /// Close channel (0x4C).
    case closeChannel(channel: UInt8)
    /// Unassign channel (0x41).
    case unassignChannel(channel: UInt8)

    // MARK: Both directions

    /// Channel id (0x51): sets a channel's id (host → stick) or reports it (stick → host).
    case channelID(channel: UInt8, id: ANTChannelID)

    // MARK: Stick → host

    /// Startup message (0x6F): the reason bits (0 = power-on, 0x20 = reset command).
    case startup(reason: UInt8)
    /// Capabilities (0x54).
    case capabilities(ANTCapabilities)
    /// Channel status (0x52), requested: the channel's state in bits 0–1 (0 unassigned, 1
    /// assigned, 2 searching, 3 tracking), its network and type above.
    case channelStatus(channel: UInt8, status: UInt8)
    /// A channel response (0x40) to command `messageID`, with its code.
    case channelResponse(channel: UInt8, messageID: UInt8, code: ANTResponseCode)
    /// A channel event (0x40 with message id 1): a search timeout, a closed channel.
    case channelEvent(channel: UInt8, code: ANTResponseCode)
    /// Broadcast data (0x4E).
    case broadcastData(ANTBroadcast)
    /// Serial error message (0xAE): the stick received a malformed frame.
    case serialError(payload: [UInt8])

    /// A message this enumeration does not type.
    case other(id: UInt8, payload: [UInt8])

    /// The message id a channel event carries in place of a command id.
    public static let eventMessageID: UInt8 = 0x01

    /// The reason bit of a startup message after a reset command.
    public static let startupAfterResetCommand: UInt8 = 0x20

    /// The message's id.
    public var id: UInt8 {
        switch self {
        case .resetSystem: ANTMessageID.resetSystem.rawValue
        case .requestMessage: ANTMessageID.requestMessage.rawValue
        case .setNetworkKey: ANTMessageID.setNetworkKey.rawValue
        case .assignChannel: ANTMessageID.assignChannel.rawValue
        case .channelPeriod: ANTMessageID.channelPeriod.rawValue
        case .searchTimeout: ANTMessageID.searchTimeout.rawValue
        case .lowPrioritySearchTimeout: ANTMessageID.lowPrioritySearchTimeout.rawValue
        case .channelRFFrequency: ANTMessageID.channelRFFrequency.rawValue
        case .libConfig: ANTMessageID.libConfig.rawValue
        case .openRxScanMode: ANTMessageID.openRxScanMode.rawValue
        case .openChannel: ANTMessageID.openChannel.rawValue
        case .closeChannel: ANTMessageID.closeChannel.rawValue
        case .unassignChannel: ANTMessageID.unassignChannel.rawValue
        case .channelID: ANTMessageID.channelID.rawValue
        case .startup: ANTMessageID.startup.rawValue
        case .capabilities: ANTMessageID.capabilities.rawValue
        case .channelStatus: ANTMessageID.channelStatus.rawValue
        case .channelResponse, .channelEvent: ANTMessageID.channelResponse.rawValue
        case .broadcastData: ANTMessageID.broadcastData.rawValue
        case .serialError: ANTMessageID.serialError.rawValue
        case .other(let id, _): id
        }
    }

    /// The message's payload on the wire.
    public var payload: [UInt8] {
        switch self {
        case .resetSystem: [0x00]
        case .requestMessage(let channel, let messageID): [channel, messageID]
        case .setNetworkKey(let network, let key): [network] + key.bytes
        case .assignChannel(let channel, let type, let network): [channel, type, network]
        case .channelPeriod(let channel, let period): [channel, UInt8(period & 0xFF), UInt8(period >> 8)]
        case .searchTimeout(let channel, let timeout), .lowPrioritySearchTimeout(let channel, let timeout):
            [channel, timeout]
        case .channelRFFrequency(let channel, let frequency): [channel, frequency]
        case .libConfig(let flags): [0x00, flags]
        case .openRxScanMode: [0x00]
        case .openChannel(let channel), .closeChannel(let channel), .unassignChannel(let channel): [channel]
        case .channelID(let channel, let id): [channel] + id.bytes
        case .startup(let reason): [reason]
        case .capabilities(let capabilities): capabilities.bytes
        case .channelStatus(let channel, let status): [channel, status]
        case .channelResponse(let channel, let messageID, let code): [channel, messageID, code.rawValue]
        case .channelEvent(let channel, let code): [channel, Self.eventMessageID, code.rawValue]
        case .broadcastData(let broadcast): broadcast.bytes
        case .serialError(let payload): payload
        case .other(_, let payload): payload
        }
    }

    /// The message as a frame.
    public var frame: ANTFrame { ANTFrame(id: id, payload: payload) }

    /// The message's bytes on the wire.
    public var encoded: [UInt8] { frame.encoded }

    /// Decodes `frame`. Throws when the payload is shorter than its message needs; longer
    /// payloads are accepted (later protocol versions append fields).
    public init(frame: ANTFrame) throws(ANTDecodingError) {
        let payload = frame.payload
        guard let known = ANTMessageID(rawValue: frame.id) else {
            self = .other(id: frame.id, payload: payload)
            return
        }
        func need(_ count: Int) throws(ANTDecodingError) {
            guard payload.count >= count else {
                throw ANTDecodingError(what: known.commandName, expected: count, actual: payload.count)
            }
        }
        switch known {
        case .resetSystem:
            self = .resetSystem
        case .requestMessage:
            try need(2)
            self = .requestMessage(channel: payload[0], messageID: payload[1])
        case .setNetworkKey:
            try need(9)
            // Exactly 8 bytes follow the network number: the init cannot fail.
            guard let key = ANTNetworkKey(bytes: Array(payload[1...8])) else {
                throw ANTDecodingError(what: known.commandName, expected: 9, actual: payload.count)
            }
            self = .setNetworkKey(network: payload[0], key: key)
        case .assignChannel:
            try need(3)
            self = .assignChannel(channel: payload[0], type: payload[1], network: payload[2])
        case .channelPeriod:
            try need(3)
            self = .channelPeriod(channel: payload[0], period: UInt16(payload[1]) | UInt16(payload[2]) << 8)
        case .searchTimeout:
            try need(2)
            self = .searchTimeout(channel: payload[0], timeout: payload[1])
        case .lowPrioritySearchTimeout:
            try need(2)
            self = .lowPrioritySearchTimeout(channel: payload[0], timeout: payload[1])
        case .channelRFFrequency:
            try need(2)
            self = .channelRFFrequency(channel: payload[0], frequency: payload[1])
        case .libConfig:
            try need(2)
            self = .libConfig(flags: payload[1])
        case .openRxScanMode:
            self = .openRxScanMode
        case .openChannel:
            try need(1)
            self = .openChannel(channel: payload[0])
        case .closeChannel:
            try need(1)
            self = .closeChannel(channel: payload[0])
        case .unassignChannel:
            try need(1)
            self = .unassignChannel(channel: payload[0])
        case .channelID:
            try need(5)
            self = .channelID(channel: payload[0], id: ANTChannelID(wire: payload[1...4]))
        case .startup:
            try need(1)
            self = .startup(reason: payload[0])
        case .channelStatus:
            try need(2)
            self = .channelStatus(channel: payload[0], status: payload[1])
        case .capabilities:
            try need(5)
            self = .capabilities(
                ANTCapabilities(
                    maximumChannels: payload[0], maximumNetworks: payload[1], standardOptions: payload[2],
                    advancedOptions: payload[3], advancedOptions2: payload[4], moreOptions: Array(payload.dropFirst(5))))
        case .channelResponse:
            try need(3)
            if payload[1] == Self.eventMessageID {
                self = .channelEvent(channel: payload[0], code: ANTResponseCode(rawValue: payload[2]))
            } else {
                self = .channelResponse(channel: payload[0], messageID: payload[1], code: ANTResponseCode(rawValue: payload[2]))
            }
        case .broadcastData:
            self = .broadcastData(try ANTBroadcast(payload: payload))
        case .acknowledgedData:
            // Read like a broadcast: a strap has nothing to acknowledge, but the page is the same.
            self = .broadcastData(try ANTBroadcast(payload: payload, what: known.commandName))
        case .serialError:
            self = .serialError(payload: payload)
        }
    }
}

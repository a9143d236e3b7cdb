/// What a stick can do: its answer to a request for message 0x54 ("ANT Message Protocol and
/// Usage", §9.5.7.4). Only the options healthgate needs are named; the raw bytes are kept.
public struct ANTCapabilities: Hashable, Sendable {
    /// How many channels the stick has.
    public var maximumChannels: UInt8
    /// How many networks (network keys) it holds.
    public var maximumNetworks: UInt8
    /// Standard options: bit 0 set means no receive channels.
    public var standardOptions: UInt8
    /// Advanced options.
    public var advancedOptions: UInt8
    /// Advanced options 2: bit 1 extended messages, bit 2 scan mode.
    public var advancedOptions2: UInt8
    /// The bytes after advanced options 2 (SensRcore channels, options 3 and 4), as sent.
    public var moreOptions: [UInt8]

    /// Capabilities from their fields.
    public init(
        maximumChannels: UInt8, maximumNetworks: UInt8, standardOptions: UInt8 = 0, advancedOptions: UInt8 = 0,
        advancedOptions2: UInt8 = 0, moreOptions: [UInt8] = [0]
    ) {
        self.maximumChannels = maximumChannels
        self.maximumNetworks = maximumNetworks
        self.standardOptions = standardOptions
        self.advancedOptions = advancedOptions
        self.advancedOptions2 = advancedOptions2
        self.moreOptions = moreOptions
    }

    /// CAPABILITIES_EXT_MESSAGE_ENABLED (advanced options 2, bit 1).
    public static let extendedMessagesBit: UInt8 = 0x02
    /// CAPABILITIES_SCAN_MODE_ENABLED (advanced options 2, bit 2).
    public static let scanModeBit: UInt8 = 0x04
    /// CAPABILITIES_NO_RECEIVE_CHANNELS (standard options, bit 0).
    public static let noReceiveChannelsBit: UInt8 = 0x01

    /// The stick adds the channel id (and more) to received messages.
    public var supportsExtendedMessages: Bool { advancedOptions2 & Self.extendedMessagesBit != 0 }
    /// The stick can open RX scan mode (continuous scan).
    public var supportsScanMode: Bool { advancedOptions2 & Self.scanModeBit != 0 }
    /// The stick can receive at all.
    public var canReceive: Bool { standardOptions & Self.noReceiveChannelsBit == 0 }
    /// Continuous scan works: scan mode with extended messages (the channel id of each broadcast).
    public var supportsContinuousScan: Bool { supportsScanMode && supportsExtendedMessages && canReceive }

    /// The payload on the wire.
    public var bytes: [UInt8] {
        [maximumChannels, maximumNetworks, standardOptions, advancedOptions, advancedOptions2] + moreOptions
    }
}

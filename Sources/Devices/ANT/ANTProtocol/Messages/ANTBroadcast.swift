/// A broadcast data message (0x4E) received by the stick: the channel, the 8-byte ANT+ page,
/// and the extended data the stick adds when lib config asked for it (the flag byte after the
/// page; "ANT Message Protocol and Usage", §7.1.1, flagged extended data format).
public struct ANTBroadcast: Hashable, Sendable {
    /// The flag bit announcing the channel id (4 bytes) in the extended data.
    public static let channelIDFlag: UInt8 = 0x80
    /// The flag bit announcing RSSI (measurement type, RSSI in dBm, threshold: 3 bytes).
    public static let rssiFlag: UInt8 = 0x40
    /// The flag bit announcing the stick's receive timestamp (2 bytes, 1/32768 s).
    public static let timestampFlag: UInt8 = 0x20

    /// The channel that received it (0 in scan mode).
    public var channel: UInt8
    /// The 8-byte page.
    public var page: [UInt8]
    /// The transmitter's channel id, when the stick added it.
    public var channelID: ANTChannelID?
    /// The received signal strength in dBm, when the stick added it.
    public var rssi: Int8?
    /// The stick's receive timestamp (1/32768 s, rolling over), when the stick added it.
    public var timestamp: UInt16?

    /// A broadcast from its fields; `page` must be 8 bytes (it is padded or cut to 8).
    public init(channel: UInt8, page: [UInt8], channelID: ANTChannelID? = nil, rssi: Int8? = nil, timestamp: UInt16? = nil) {
        self.channel = channel
        self.page = Array((page + Array(repeating: 0, count: 8)).prefix(8))
        self.channelID = channelID
        self.rssi = rssi
        self.timestamp = timestamp
    }

    /// The payload on the wire: legacy-free flagged format (a flag byte only when extended data
    /// is present).
    public var bytes: [UInt8] {
        var bytes = [channel] + page
        var flag: UInt8 = 0
        var extended: [UInt8] = []
        if let channelID {
            flag |= Self.channelIDFlag
            extended += channelID.bytes
        }
        if let rssi {
            flag |= Self.rssiFlag
            extended += [0x20, UInt8(bitPattern: rssi), 0x00]
        }
        if let timestamp {
            flag |= Self.timestampFlag
            extended += [UInt8(timestamp & 0xFF), UInt8(timestamp >> 8)]
        }
        if flag != 0 { bytes += [flag] + extended }
        return bytes
    }

    /// Decodes a broadcast's payload. Extended data the flag announces but that is missing is an
    /// error; bytes after the announced data are ignored.
    public init(payload: [UInt8], what: String = ANTMessageID.broadcastData.commandName) throws(ANTDecodingError) {
        guard payload.count >= 9 else { throw ANTDecodingError(what: what, expected: 9, actual: payload.count) }
        channel = payload[0]
        page = Array(payload[1...8])
        guard payload.count > 9 else { return }
        let flag = payload[9]
        var needed = 10
        if flag & Self.channelIDFlag != 0 { needed += 4 }
        if flag & Self.rssiFlag != 0 { needed += 3 }
        if flag & Self.timestampFlag != 0 { needed += 2 }
        guard payload.count >= needed else { throw ANTDecodingError(what: what, expected: needed, actual: payload.count) }
        var offset = 10
        if flag & Self.channelIDFlag != 0 {
            channelID = ANTChannelID(wire: payload[offset..<(offset + 4)])
            offset += 4
        }
        if flag & Self.rssiFlag != 0 {
            rssi = Int8(bitPattern: payload[offset + 1])
            offset += 3
        }
        if flag & Self.timestampFlag != 0 {
            timestamp = UInt16(payload[offset]) | UInt16(payload[offset + 1]) << 8
        }
    }
}

public import ANTProtocol
import AsyncPrimitives
import Dispatch
import FoundationEssentials
public import GatewayRuntime
public import LinuxSystem
import Synchronization

/// A USB ANT stick with a class of ANT+ heart-rate straps, speaking the real ANT serial
/// protocol on the master side of a pseudo-terminal, for `transport: simulated`, the demo and
/// tests. The gateway opens ``devicePath`` (the pty slave) like a stick's tty.
///
/// It answers the host's commands as a stick does (startup after a reset, capabilities with
/// extended messages and scan mode, a response to each configuration command, the failure code
/// a stick gives a command it does not know) and, once RX scan mode is open with the same
/// network key as its straps', sends each strap's broadcasts four times a second with the
/// flagged channel id. The straps beat at realistic, drifting rates and start near their
/// 16-bit beat-time and 8-bit count rollovers; about one message in 30 is lost, as on the air;
/// one strap in seven is a legacy strap (no toggle); the second strap leaves for 8 s every
/// minute and comes back. Thread-safe.
public final class SimulatedANTStick: Sendable {
    /// The path the gateway opens: the pty slave.
    public var devicePath: String { pty.slavePath }
    /// The strap's ids, in order.
    public var straps: [ANTDeviceIdentifier] { strapModels.withLock { $0.map(\.id.device) } }
    /// The serial number each strap sends the upper half of on page 2 (a legacy strap sends none).
    public var serialNumbers: [ANTDeviceIdentifier: ANTSerialNumber] {
        strapModels.withLock { straps in
            Dictionary(uniqueKeysWithValues: straps.filter { !$0.legacy }.map { ($0.id.device, $0.serialNumber) })
        }
    }

    private let pty: PseudoTerminal
    private let clock: any GatewayClock
    private let logger: Logger
    private let key: ANTNetworkKey
    private let queue = DispatchQueue(label: "healthgate.ant-stick-simulator")
    /// Runs the pty writes, which may block, off the cooperative pool.
    private let writer = QueueExecutor(label: "healthgate.ant-stick-simulator.write")
    private let strapModels: Mutex<[SimulatedStrap]>
    private struct State {
        var scanning = false
        var keyMatches = false
        var extendedChannelID = false
        var broadcastsSent = 0
    }
    private let state = Mutex(State())

    /// Opens the pty pair and makes `straps` straps, which share `networkKey` (the source's). The
    /// straps' ids are ``strapIdentifiers(count:seed:)`` of `seed` (the source's name): the same
    /// straps every run, so the demo can give each to a participant before the stick plays.
    public init(straps: Int, networkKey: ANTNetworkKey, seed: String, clock: any GatewayClock, logger: Logger) throws(SystemError) {
        self.clock = clock
        self.logger = logger
        key = networkKey
        pty = try PseudoTerminal()
        var models: [SimulatedStrap] = []
        for (index, device) in Self.strapIdentifiers(count: straps, seed: seed).enumerated() {
            let id = ANTChannelID(device)
            let manufacturers: [UInt8] = [1, 32, 23, 123, 89]
            models.append(SimulatedStrap(
                id: id, legacy: index % 7 == 6, baseRate: Double(70 + (index * 13) % 70),
                manufacturer: manufacturers[index % manufacturers.count],
                // Above the 20-bit device number, as a strap that extends its number has it.
                serialNumber: ANTSerialNumber(value: UInt32(0x2A0 + index) << 20 | device.deviceNumber),
                startTime: UInt16.random(in: 60_000...65_535), startCount: UInt8.random(in: 200...255)))
        }
        strapModels = Mutex(models)
    }

    /// The ids of the `count` straps (at least one) a stick made with `seed` plays: distinct
    /// 20-bit device numbers whose 16-bit part is not 0 (the pairing wildcard), drawn from a
    /// generator seeded by `seed` (SplitMix64 over its FNV-1a hash), the same on every run.
    public static func strapIdentifiers(count: Int, seed: String) -> [ANTDeviceIdentifier] {
        var state = seed.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        var numbers = Set<UInt32>()
        var identifiers: [ANTDeviceIdentifier] = []
        while identifiers.count < max(1, count) {
            let number = UInt32(truncatingIfNeeded: next()) & 0xF_FFFF
            guard number & 0xFFFF != 0, numbers.insert(number).inserted else { continue }
            identifiers.append(ANTDeviceIdentifier(deviceType: ANTDeviceIdentifier.heartRateDeviceType, deviceNumber: number))
        }
        return identifiers
    }

    /// Broadcasts sent so far.
    public var broadcastsSent: Int { state.withLock { $0.broadcastsSent } }

    /// Plays the stick until cancelled (throws `CancellationError`); hangs the pty up on the way
    /// out when `hangUpAtEnd`.
    public func run(hangUpAtEnd: Bool = true) async throws {
        try await pty.withMasterReader(queue: queue, hangUpAtEnd: hangUpAtEnd) { reader in
            let started = clock.uptime()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.answer(reader) }
                group.addTask {
                    while true {
                        try await self.clock.sleep(for: .milliseconds(246))
                        await self.broadcast(at: (self.clock.uptime() - started).seconds)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Closes the master: the gateway's reader sees the stick go away (as when unplugged).
    public func hangUp() { pty.hangUp() }

    private func answer(_ reader: ByteStreamReader) async {
        var framer = ANTFramer()
        for await event in reader.events {
            guard case .bytes(let bytes) = event else { break }
            for output in framer.append(bytes) {
                guard case .frame(let frame) = output else { continue }
                guard let message = try? ANTMessage(frame: frame) else {
                    await write(ANTMessage.serialError(payload: [0x02]).encoded)
                    continue
                }
                for reply in replies(to: message) { await write(reply.encoded) }
            }
        }
    }

    /// What a stick answers to `message` (§9.5: a channel response to every configuration
    /// command, the requested message, the startup message after a reset).
    private func replies(to message: ANTMessage) -> [ANTMessage] {
        func ok(_ channel: UInt8) -> [ANTMessage] {
            [.channelResponse(channel: channel, messageID: message.id, code: .noError)]
        }
        switch message {
        case .resetSystem:
            state.withLock { $0 = State() }
            return [.startup(reason: ANTMessage.startupAfterResetCommand)]
        case .requestMessage(_, let id) where id == ANTMessageID.capabilities.rawValue:
            return [.capabilities(ANTCapabilities(
                maximumChannels: 8, maximumNetworks: 8, advancedOptions: 0x02,
                advancedOptions2: ANTCapabilities.extendedMessagesBit | ANTCapabilities.scanModeBit, moreOptions: [0, 0, 0]))]
        case .requestMessage(let channel, let id) where id == ANTMessageID.channelStatus.rawValue:
            let scanning = state.withLock { $0.scanning }
            return [.channelStatus(channel: channel, status: scanning ? 2 : 1)]
        case .requestMessage(let channel, _):
            return [.channelResponse(channel: channel, messageID: message.id, code: .invalidMessage)]
        case .setNetworkKey(let network, let sent):
            state.withLock { $0.keyMatches = sent == key }
            return ok(network)
        case .libConfig(let flags):
            state.withLock { $0.extendedChannelID = flags & ANTBroadcast.channelIDFlag != 0 }
            return ok(0)
        case .openRxScanMode:
            state.withLock { $0.scanning = true }
            return ok(0)
        case .assignChannel(let channel, _, _), .channelID(let channel, _), .channelRFFrequency(let channel, _),
            .channelPeriod(let channel, _), .searchTimeout(let channel, _), .lowPrioritySearchTimeout(let channel, _),
            .openChannel(let channel), .unassignChannel(let channel):
            return ok(channel)
        case .closeChannel(let channel):
            state.withLock { $0.scanning = false }
            return ok(channel) + [.channelEvent(channel: channel, code: .channelClosed)]
        case .startup, .capabilities, .channelStatus, .channelResponse, .channelEvent, .broadcastData, .serialError, .other:
            return [.channelResponse(channel: 0, messageID: message.id, code: .invalidMessage)]
        }
    }

    private func broadcast(at seconds: Double) async {
        let (scanning, keyMatches, extended) = state.withLock { ($0.scanning, $0.keyMatches, $0.extendedChannelID) }
        guard scanning, keyMatches else { return }
        var bytes: [UInt8] = []
        var sent = 0
        strapModels.withLock { straps in
            for index in straps.indices {
                let page = straps[index].page(at: seconds)
                // The second strap leaves the room for 8 s every minute.
                if index == 1, seconds.truncatingRemainder(dividingBy: 60) >= 40, seconds.truncatingRemainder(dividingBy: 60) < 48 {
                    continue
                }
                // About one message in 30 is lost on the air.
                if Int.random(in: 0..<30) == 0 { continue }
                let broadcast = ANTBroadcast(channel: 0, page: page, channelID: extended ? straps[index].id : nil)
                bytes += ANTMessage.broadcastData(broadcast).encoded
                sent += 1
            }
        }
        state.withLock { $0.broadcastsSent += sent }
        if !bytes.isEmpty { await write(bytes) }
    }

    /// Writes on the simulator's queue: the pty write may wait for room, which must not happen
    /// on the cooperative pool.
    private func write(_ bytes: [UInt8]) async {
        await writer.run { [pty, logger, devicePath] in
            do {
                try pty.write(bytes)
            } catch {
                logger.warning("simulated stick write to \(devicePath) failed: \(error)")
            }
        }
    }
}

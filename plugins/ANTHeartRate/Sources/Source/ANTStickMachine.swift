import ANTProtocol
import FoundationEssentials
import HealthModel
import HealthStore

/// The state machine of one stick session: inputs (the stick's messages, a tick of the clock)
/// in, actions out. Pure apart from drawing sample ids: no I/O and no clock, so the whole
/// session is tested without a tty. ``ANTStickSession`` is its thin driver.
///
/// Setup ("ANT Message Protocol and Usage", §5 and §9): reset and wait for the startup message,
/// ask for the capabilities; then, on a stick that can (extended messages and scan mode),
/// continuous scan: the network key on network 0, channel 0 assigned receive-only, the wildcard
/// channel id, RF 57 (2457 MHz), lib config for the channel id with every broadcast, open RX
/// scan mode. On a stick that cannot, as many paired channels as it has, each searching for any
/// heart-rate strap (device type 120, period 8070), one strap each, their ids asked for once
/// they pair. Every command waits for its channel response; a failure code, or no answer within
/// ``answerTimeout``, ends the session with an ``ANTStickError`` naming the command and the
/// stick. A strap silent for `lostAfter` is lost; when every strap is, the stick is asked for
/// its channel status first, and the straps still silent once it answered (its answer follows
/// the broadcasts it held) are the lost ones.
struct ANTStickMachine {
    /// What the driver does.
    enum Action {
        /// Write a message to the stick.
        case send(ANTMessage)
        /// Publish records, with the strap's checkpoint.
        case publish([HealthRecord], SourceCheckpoint?)
        /// Log at `level`.
        case log(LogLevelChoice, String, device: String?)
        /// Set a status detail (nil removes it).
        case detail(String, String?)
        /// Report an error in status.
        case reportError(String)
        /// End the session.
        case fail(ANTStickError)
    }

    /// A log level, without making the machine depend on the logger.
    enum LogLevelChoice { case info, notice, warning, error }

    /// The receive mode the stick ended up in.
    enum Mode: Equatable {
        case settingUp
        case scanning
        case paired(channels: Int)
    }

    /// Seconds a command may wait for its answer.
    static let answerTimeout: TimeInterval = 3
    /// ANT+'s RF channel: 2457 MHz.
    static let antPlusFrequency: UInt8 = 57
    /// A heart-rate monitor's channel period (8070/32768 s, about 4.06 messages per second).
    static let heartRatePeriod: UInt16 = 8070
    /// Receive (slave) channel type.
    static let receiveChannel: UInt8 = 0x00

    private struct Step {
        var message: ANTMessage
        /// Waiting for the startup message (reset) or capabilities (the request), not a response.
        var optional = false
    }

    let stick: String
    let networkKey: ANTNetworkKey
    let ids: SampleIDGenerator
    let lostAfter: TimeInterval
    let seriesMaxBeats: Int
    let seriesSeconds: Double

    private(set) var mode = Mode.settingUp
    private var steps: [Step] = []
    private var waiting: (step: Step, since: Date)?
    private var capabilities: ANTCapabilities?
    private var strapsByID: [ANTDeviceIdentifier: StrapRecorder] = [:]
    /// Paired mode: the strap each channel tracks, once its id is known.
    private var channelDevices: [UInt8: ANTDeviceIdentifier] = [:]
    private var channelIDRequested: Set<UInt8> = []
    private(set) var broadcasts = 0
    /// When the stick was asked for its channel status because every live strap fell silent at
    /// once (the stick or the host stalled, or every strap left): no strap is declared lost until
    /// it answers, or until ``answerTimeout`` passes without an answer.
    private var silenceCheck: Date?
    /// When the last broadcast of any strap arrived.
    private var lastBroadcast: Date?
    /// The last time no broadcast arrived for the timeout: from the broadcast before to the one
    /// that ended it.
    private var stall: (start: Date, end: Date)?
    private(set) var foreignBroadcasts = 0

    init(stick: String, networkKey: ANTNetworkKey, ids: SampleIDGenerator, lostAfter: TimeInterval, seriesMaxBeats: Int, seriesSeconds: Double) {
        self.stick = stick
        self.networkKey = networkKey
        self.ids = ids
        self.lostAfter = lostAfter
        self.seriesMaxBeats = seriesMaxBeats
        self.seriesSeconds = seriesSeconds
    }

    /// The straps heard in this session.
    var straps: [ANTDeviceIdentifier] { strapsByID.keys.sorted() }

    /// Starts the setup: reset the stick.
    mutating func start(at date: Date) -> [Action] {
        steps = [Step(message: .resetSystem, optional: true), Step(message: .requestMessage(channel: 0, messageID: ANTMessageID.capabilities.rawValue))]
        return advance(at: date)
    }

    /// Whether a broadcast comes from a strap this session has not met (the driver reads its
    /// checkpoint before passing the broadcast on), and which.
    func unknownStrap(in message: ANTMessage) -> ANTDeviceIdentifier? {
        guard case .broadcastData(let broadcast) = message, let device = device(of: broadcast) else { return nil }
        return strapsByID[device] == nil ? device : nil
    }

    /// Meets a strap, with the checkpoint the store holds for it.
    mutating func meet(_ device: ANTDeviceIdentifier, restored: StrapCheckpoint?, at date: Date) -> [Action] {
        strapsByID[device] = StrapRecorder(
            identifier: device, ids: ids, seriesMaxBeats: seriesMaxBeats, seriesSeconds: seriesSeconds, restored: restored, at: date)
        return [
            .log(.info, "found strap \(device)", device: device.description),
            .detail("straps", "\(strapsByID.count) heard"),
        ]
    }

    /// One message from the stick.
    mutating func receive(_ message: ANTMessage, at date: Date) -> [Action] {
        switch message {
        case .startup:
            guard let waiting, waiting.step.message == .resetSystem else {
                return mode == .settingUp ? [] : [.fail(ANTStickError(stick: stick, .restarted))]
            }
            self.waiting = nil
            return advance(at: date)
        case .capabilities(let capabilities):
            guard let waiting, case .requestMessage = waiting.step.message else { return [] }
            self.waiting = nil
            self.capabilities = capabilities
            return configure(capabilities) + advance(at: date)
        case .channelStatus:
            return silenceCheck == nil ? [] : silenceChecked(at: date)
        case .channelResponse(_, let messageID, _) where silenceCheck != nil && messageID == ANTMessageID.requestMessage.rawValue && waiting == nil:
            // A stick that refuses the request answered it all the same.
            return silenceChecked(at: date)
        case .channelResponse(_, let messageID, let code):
            guard let waiting, waiting.step.message.id == messageID else { return [] }
            guard code.isSuccess else {
                return [.fail(ANTStickError(stick: stick, .refused(command: ANTMessageID.name(of: messageID), code: code)))]
            }
            self.waiting = nil
            return advance(at: date)
        case .channelEvent(let channel, let code):
            return event(channel: channel, code: code)
        case .channelID(let channel, let id):
            guard case .paired = mode, id.deviceNumber != 0 else { return [] }
            channelDevices[channel] = id.device
            return [.log(.info, "channel \(channel) paired with \(id.device)", device: stick)]
        case .broadcastData(let broadcast):
            return receive(broadcast, at: date)
        case .serialError(let payload):
            return [.log(.warning, "the stick reports a malformed frame from us (serial error \(payload.first.map { String($0) } ?? "?"))", device: stick)]
        case .resetSystem, .requestMessage, .setNetworkKey, .assignChannel, .channelPeriod, .searchTimeout, .lowPrioritySearchTimeout,
            .channelRFFrequency, .libConfig, .openRxScanMode, .openChannel, .closeChannel, .unassignChannel, .other:
            return []
        }
    }

    /// The framer skipped `count` bytes of garbage (one episode) at `date`. The first episode is
    /// logged; later ones at most once per ``garbageLogInterval``, with what was skipped since,
    /// so a noisy line does not flood the log.
    mutating func resynchronised(skipping count: Int, at date: Date) -> [Action] {
        garbage.bytes += count
        garbage.episodes += 1
        if let last = garbage.logged, date.timeIntervalSince(last) < Self.garbageLogInterval { return [] }
        let message =
            garbage.episodes == 1
            ? "skipped \(garbage.bytes) bytes that were no ANT frame"
            : "skipped \(garbage.bytes) bytes that were no ANT frame in \(garbage.episodes) runs"
                + " over the last \(Int(Self.garbageLogInterval)) s"
        garbage = (0, 0, date)
        return [.log(.warning, message, device: stick)]
    }

    /// The shortest time between two logged garbage warnings.
    static let garbageLogInterval: TimeInterval = 10
    private var garbage: (bytes: Int, episodes: Int, logged: Date?) = (0, 0, nil)

    /// The clock at `date`: an unanswered command times out, silent straps are lost.
    mutating func tick(at date: Date) -> [Action] {
        var actions: [Action] = []
        if let waiting, date.timeIntervalSince(waiting.since) >= Self.answerTimeout {
            if waiting.step.optional {
                // A stick that sends no startup message after a reset (some do not over USB):
                // go on, the next command says whether it listens.
                self.waiting = nil
                actions += [.log(.notice, "no startup message after the reset; going on", device: stick)]
                actions += advance(at: date)
            } else {
                return [.fail(ANTStickError(stick: stick, .noAnswer(command: ANTMessageID.name(of: waiting.step.message.id))))]
            }
        }
        let silent = silentStraps(at: date)
        if !silent.isEmpty {
            if silent.count < strapsByID.values.count(where: { !$0.isLost }) {
                // Others are heard: the stick and the host are reading, these straps are silent.
                actions += lose(silent)
            } else if let asked = silenceCheck {
                if date.timeIntervalSince(asked) >= Self.answerTimeout {
                    silenceCheck = nil
                    actions += lose(silent, because: "; the stick did not answer a channel status request within \(Int(Self.answerTimeout)) s either")
                }
            } else {
                silenceCheck = date
                actions += [
                    .send(.requestMessage(channel: 0, messageID: ANTMessageID.channelStatus.rawValue)),
                    .log(.info, "every strap silent for \(Int(lostAfter)) s: asking the stick before declaring any lost", device: stick),
                ]
            }
        }
        let lost = strapsByID.values.filter(\.isLost).count
        actions.append(.detail("straps", strapsByID.isEmpty ? nil : "\(strapsByID.count - lost) live, \(lost) lost"))
        actions.append(.detail("broadcasts", broadcasts == 0 ? nil : "\(broadcasts) received"))
        return actions
    }

    /// The live straps silent for ``lostAfter`` at `date`.
    private func silentStraps(at date: Date) -> [ANTDeviceIdentifier] {
        strapsByID.filter { !$0.value.isLost && date.timeIntervalSince($0.value.lastHeard) >= lostAfter }.keys.sorted()
    }

    /// Whether a strap unheard from `heard` to `date` was silent for the timeout while the stick
    /// delivered others' broadcasts: the part of the silence outside the last stall (no broadcast
    /// at all for the timeout: the stick or the host, not the strap) is the timeout or longer.
    private func silentOnTheAir(since heard: Date, until date: Date) -> Bool {
        guard date.timeIntervalSince(heard) >= lostAfter else { return false }
        guard let stall, stall.end > heard else { return true }
        return stall.start.timeIntervalSince(heard) >= lostAfter || date.timeIntervalSince(stall.end) >= lostAfter
    }

    /// Declares `devices` lost (silent for `silentFor` seconds, the timeout when nil): each one's
    /// series being built is published.
    private mutating func lose(_ devices: [ANTDeviceIdentifier], silentFor: TimeInterval? = nil, because reason: String = "") -> [Action] {
        var actions: [Action] = []
        for device in devices {
            guard var strap = strapsByID[device] else { continue }
            let output = strap.lose()
            strapsByID[device] = strap
            let silence = silentFor.map { "\(($0 * 10).rounded() / 10)" } ?? "\(Int(lostAfter))"
            actions += [.log(.notice, "lost strap \(device): silent for \(silence) s\(reason)", device: device.description)]
            if !output.records.isEmpty { actions.append(.publish(output.records, nil)) }
        }
        return actions
    }

    /// The stick answered the channel status request asked when every strap fell silent at
    /// `date`: its answer comes after every broadcast it held before it, all read now, so the
    /// straps still silent are silent on the air.
    private mutating func silenceChecked(at date: Date) -> [Action] {
        silenceCheck = nil
        return lose(silentStraps(at: date))
    }

    /// Publishes every series being built (the session is ending).
    mutating func finish() -> [Action] {
        var actions: [Action] = []
        for device in strapsByID.keys.sorted() {
            guard var strap = strapsByID[device] else { continue }
            let output = strap.lose()
            strapsByID[device] = strap
            if !output.records.isEmpty { actions.append(.publish(output.records, nil)) }
        }
        return actions
    }

    /// The wall clock stepped by `seconds`.
    mutating func clockStepped(by seconds: Double) {
        for device in strapsByID.keys { strapsByID[device]?.clockStepped(by: seconds) }
        waiting = waiting.map { ($0.step, $0.since.addingTimeInterval(seconds)) }
    }

    /// The status line of one strap, for `status`.
    func summary(of device: ANTDeviceIdentifier) -> String? {
        guard let strap = strapsByID[device] else { return nil }
        var parts = [strap.isLost ? "lost" : "live"]
        if let rate = strap.lastHeartRate { parts.append("\(rate) bpm") }
        parts.append("\(strap.beatsRecorded) beats")
        if strap.beatsMissed > 0 { parts.append("\(strap.beatsMissed) missed") }
        if let level = strap.battery?.level { parts.append("battery \(level) %") }
        if let manufacturer = strap.device.manufacturer { parts.append(manufacturer) }
        if let serial = strap.serialNumber { parts.append("serial \(serial)") }
        return parts.joined(separator: ", ")
    }

    // MARK: Setup

    private mutating func advance(at date: Date) -> [Action] {
        guard waiting == nil else { return [] }
        guard !steps.isEmpty else {
            guard mode == .settingUp, capabilities != nil else { return [] }
            return opened()
        }
        let step = steps.removeFirst()
        waiting = (step, date)
        return [.send(step.message)]
    }

    private mutating func configure(_ capabilities: ANTCapabilities) -> [Action] {
        guard capabilities.canReceive, capabilities.maximumChannels > 0 else {
            return [.fail(ANTStickError(stick: stick, .cannotReceive))]
        }
        var actions: [Action] = []
        steps = [Step(message: .setNetworkKey(network: 0, key: networkKey))]
        if capabilities.supportsContinuousScan {
            steps += [
                Step(message: .assignChannel(channel: 0, type: Self.receiveChannel, network: 0)),
                Step(message: .channelID(channel: 0, id: .wildcard)),
                Step(message: .channelRFFrequency(channel: 0, frequency: Self.antPlusFrequency)),
                Step(message: .libConfig(flags: ANTBroadcast.channelIDFlag)),
                Step(message: .openRxScanMode),
            ]
        } else {
            let channels = Int(capabilities.maximumChannels)
            let missing = [
                capabilities.supportsExtendedMessages ? nil : "extended messages",
                capabilities.supportsScanMode ? nil : "scan mode",
            ].compactMap { $0 }.joined(separator: " and ")
            let message =
                "the ANT stick \(stick) cannot do continuous scan (no \(missing)): "
                + "falling back to \(channels) paired channels, one strap each"
            actions += [.log(.error, message, device: stick), .reportError(message)]
            for channel in 0..<UInt8(channels) {
                steps += [
                    Step(message: .assignChannel(channel: channel, type: Self.receiveChannel, network: 0)),
                    Step(message: .channelID(channel: channel, id: ANTChannelID(deviceNumber: 0, deviceTypeByte: ANTDeviceIdentifier.heartRateDeviceType, transmissionType: 0))),
                    Step(message: .channelPeriod(channel: channel, period: Self.heartRatePeriod)),
                    Step(message: .channelRFFrequency(channel: channel, frequency: Self.antPlusFrequency)),
                    Step(message: .searchTimeout(channel: channel, timeout: 0xFF)),
                    Step(message: .openChannel(channel: channel)),
                ]
            }
        }
        return actions
    }

    private mutating func opened() -> [Action] {
        guard let capabilities else { return [] }
        if capabilities.supportsContinuousScan {
            mode = .scanning
            return [
                .detail("mode", "continuous scan (channel 0, RF 2457 MHz)"),
                .log(.info, "continuous scan open: every strap in range is heard on one channel", device: stick),
            ]
        }
        mode = .paired(channels: Int(capabilities.maximumChannels))
        return [
            .detail("mode", "paired channels: \(capabilities.maximumChannels) (the stick cannot scan), one strap each"),
            .log(.info, "\(capabilities.maximumChannels) paired channels open", device: stick),
        ]
    }

    // MARK: Running

    private func device(of broadcast: ANTBroadcast) -> ANTDeviceIdentifier? {
        if let id = broadcast.channelID { return id.device }
        return channelDevices[broadcast.channel]
    }

    private mutating func receive(_ broadcast: ANTBroadcast, at date: Date) -> [Action] {
        guard mode != .settingUp else { return [] }
        broadcasts += 1
        guard let device = device(of: broadcast) else {
            // Paired mode: a channel that found a strap says which once asked.
            guard case .paired = mode, channelIDRequested.insert(broadcast.channel).inserted else { return [] }
            return [.send(.requestMessage(channel: broadcast.channel, messageID: ANTMessageID.channelID.rawValue))]
        }
        guard device.deviceType == ANTDeviceIdentifier.heartRateDeviceType else {
            foreignBroadcasts += 1
            return []
        }
        if let lastBroadcast, date.timeIntervalSince(lastBroadcast) >= lostAfter { stall = (lastBroadcast, date) }
        lastBroadcast = date
        var actions: [Action] = []
        if let strap = strapsByID[device], !strap.isLost, silentOnTheAir(since: strap.lastHeard, until: date) {
            // Silent for the timeout by the arrival stamps while the stick delivered the others'
            // broadcasts, and no tick came in between to say so (a loop starved of its thread
            // reads the ticks after the broadcasts that ended the silence): lost, and back now.
            actions += lose([device], silentFor: date.timeIntervalSince(strap.lastHeard))
        }
        guard var strap = strapsByID[device] else { return actions }
        let wasLost = strap.isLost
        let output = strap.receive(page: broadcast.page, at: date)
        strapsByID[device] = strap
        if wasLost { actions.append(.log(.notice, "strap \(device) is back", device: device.description)) }
        for problem in output.problems { actions.append(.log(.error, problem, device: device.description)) }
        if !output.records.isEmpty || output.checkpoint != nil {
            let checkpoint = output.checkpoint.flatMap { try? $0.checkpoint(key: device.description) }
            actions.append(.publish(output.records, checkpoint))
        }
        return actions
    }

    private mutating func event(channel: UInt8, code: ANTResponseCode) -> [Action] {
        switch (mode, code) {
        case (.paired, .channelClosed), (.paired, .rxSearchTimeout):
            // A paired channel gave up its search or closed: search again for any strap.
            channelDevices[channel] = nil
            channelIDRequested.remove(channel)
            return code == .channelClosed ? [.send(.openChannel(channel: channel))] : []
        case (.paired, .rxFailGoToSearch):
            channelDevices[channel] = nil
            channelIDRequested.remove(channel)
            return []
        case (.scanning, .channelClosed):
            return [.fail(ANTStickError(stick: stick, .refused(command: "continuous scan (the channel closed)", code: code)))]
        case (_, .serialQueueOverflow), (_, .queueOverflow):
            return [.log(.warning, "the stick dropped messages (\(code.name))", device: stick)]
        default:
            return []
        }
    }
}

@testable import ANTHeartRate
import ANTProtocol
import Foundation
import HealthModel
import HealthStore
import XCTest

/// The stick session's state machine without a tty: the setup sequence, a refused or
/// unanswered command, the fallback of a stick that cannot scan, and the straps' samples: one
/// heart rate per new beat, lost after the timeout and found again, a restored strap that
/// repeats its stored beat.
final class StickMachineTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)
    private let key = ANTNetworkKey.random()
    private let strap = ANTChannelID(ANTDeviceIdentifier(deviceType: 120, deviceNumber: 863_436))

    private func machine() -> ANTStickMachine {
        ANTStickMachine(stick: "/dev/ttyUSB0", networkKey: key, ids: SampleIDGenerator(seed: 1), lostAfter: 5, seriesMaxBeats: 300, seriesSeconds: 60)
    }

    private func sent(_ actions: [ANTStickMachine.Action]) -> [ANTMessage] {
        actions.compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    private func failure(_ actions: [ANTStickMachine.Action]) -> ANTStickError? {
        actions.lazy.compactMap { if case .fail(let error) = $0 { error } else { nil } }.first
    }

    private func records(_ actions: [ANTStickMachine.Action]) -> [HealthRecord] {
        actions.flatMap { action -> [HealthRecord] in
            if case .publish(let records, _) = action { return records }
            return []
        }
    }

    /// A machine set up on a stick that scans, its commands answered.
    private func scanningMachine() -> ANTStickMachine {
        var machine = machine()
        _ = setUp(&machine, capabilities: Self.scanning)
        return machine
    }

    /// Answers every command with success until the machine stops sending; returns the commands.
    private func setUp(_ machine: inout ANTStickMachine, capabilities: ANTCapabilities) -> [ANTMessage] {
        var commands = sent(machine.start(at: start))
        var index = 0
        while index < commands.count {
            let reply: ANTMessage =
                switch commands[index] {
                case .resetSystem: .startup(reason: ANTMessage.startupAfterResetCommand)
                case .requestMessage: .capabilities(capabilities)
                default: .channelResponse(channel: 0, messageID: commands[index].id, code: .noError)
                }
            commands += sent(machine.receive(reply, at: start))
            index += 1
        }
        return commands
    }

    /// The strap's broadcast of `page` at `date`, as the session hands it over: met first when new.
    private func broadcast(_ page: ANTHeartRatePage, to machine: inout ANTStickMachine, at date: Date) -> [ANTStickMachine.Action] {
        let message = ANTMessage.broadcastData(ANTBroadcast(channel: 0, page: page.bytes, channelID: strap))
        var actions: [ANTStickMachine.Action] = []
        if let unknown = machine.unknownStrap(in: message) { actions += machine.meet(unknown, restored: nil, at: date) }
        return actions + machine.receive(message, at: date)
    }

    /// The channel status request a machine sends when every strap fell silent at once.
    private static let statusRequest = ANTMessage.requestMessage(channel: 0, messageID: ANTMessageID.channelStatus.rawValue)

    /// A tick at `date` with every strap silent, the stick answering the machine's channel status
    /// request at once with nothing held before it: the straps are lost.
    private func tickSilent(_ machine: inout ANTStickMachine, at date: Date) -> [ANTStickMachine.Action] {
        let asked = machine.tick(at: date)
        XCTAssertTrue(sent(asked).contains(Self.statusRequest), "every strap silent: the stick is asked first")
        return asked + machine.receive(.channelStatus(channel: 0, status: 2), at: date.addingTimeInterval(0.01))
    }

    private func lostNotices(_ actions: [ANTStickMachine.Action]) -> [String] {
        actions.compactMap { if case .log(.notice, let message, _) = $0, message.hasPrefix("lost strap") { message } else { nil } }
    }

    /// Two straps, a beat a second each from `count`, until `seconds`: the pages at each whole
    /// second (page 4, the toggle flipping every beat).
    private func classPages(from second: Int, to end: Int) -> [(Int, ANTBroadcast)] {
        (second..<end).flatMap { second in
            [Self.otherStrap, strap].map { id in
                let time = UInt16(truncatingIfNeeded: second * 1000)
                let page = ANTHeartRatePage(
                    toggle: second % 2 == 1, pageNumber: 4, beatTime: time, beatCount: UInt8(truncatingIfNeeded: second), computedHeartRate: 61,
                    content: .previousBeat(manufacturerSpecific: 0, previousBeatTime: time &- 1000))
                return (second, ANTBroadcast(channel: 0, page: page.bytes, channelID: id))
            }
        }
    }

    private static let otherStrap = ANTChannelID(ANTDeviceIdentifier(deviceType: 120, deviceNumber: 12_345))

    /// Feeds `pages` received at `date` (each at its own second when nil), meeting new straps.
    private func feed(_ pages: [(Int, ANTBroadcast)], to machine: inout ANTStickMachine, at date: Date? = nil) -> [ANTStickMachine.Action] {
        pages.flatMap { second, broadcast in
            let message = ANTMessage.broadcastData(broadcast)
            let at = date ?? start.addingTimeInterval(Double(second))
            var actions: [ANTStickMachine.Action] = []
            if let unknown = machine.unknownStrap(in: message) { actions += machine.meet(unknown, restored: nil, at: at) }
            return actions + machine.receive(message, at: at)
        }
    }

    /// A host that could not read the stick for 8 s (a class on a starved box): every strap
    /// falls silent at once. The machine asks the stick before declaring any lost; the stick's
    /// answer comes after the broadcasts it held, read at last, so no strap is lost, and the RR
    /// series runs on whole across the stall (the beat counts bridge it). Today's code lost
    /// both (a class run logged 311 to 349 such notices).
    func testAHostStallIsNoLostStrapAndTheSeriesStaysWhole() throws {
        var machine = scanningMachine()
        var actions = feed(classPages(from: 1, to: 10), to: &machine)
        // Seconds 10 to 17 sit in the stick until the host reads them at 18.
        let stalled = start.addingTimeInterval(18)
        actions += machine.tick(at: stalled)
        XCTAssertTrue(sent(actions).contains(Self.statusRequest))
        actions += feed(classPages(from: 10, to: 18), to: &machine, at: stalled)
        actions += machine.receive(.channelStatus(channel: 0, status: 2), at: stalled)
        actions += feed(classPages(from: 18, to: 21), to: &machine)
        actions += machine.tick(at: start.addingTimeInterval(21))
        XCTAssertEqual(lostNotices(actions), [])
        XCTAssertEqual(machine.summary(of: strap.device)?.hasPrefix("live, 61 bpm, 20 beats"), true)
        let final = records(machine.finish()).compactMap { if case .heartbeatSeries(let series) = $0 { series } else { nil } }
        XCTAssertEqual(final.count, 2)
        for series in final {
            XCTAssertEqual(series.beats.map(\.precededByGap), [true] + Array(repeating: false, count: 19), "one segment: 20 beats, 19 exact intervals")
        }
    }

    /// Every strap silent and the stick answering at once: they left (or the radio went quiet),
    /// each is lost. One strap silent while another is heard is lost without asking.
    func testStrapsSilentWhenTheStickAnswersAreLost() {
        var machine = scanningMachine()
        _ = feed(classPages(from: 1, to: 5), to: &machine)
        let asked = machine.tick(at: start.addingTimeInterval(11))
        XCTAssertEqual(lostNotices(asked), [], "not before the stick answered")
        let answered = machine.receive(.channelStatus(channel: 0, status: 2), at: start.addingTimeInterval(11.02))
        XCTAssertEqual(lostNotices(answered).count, 2)
        _ = feed(classPages(from: 12, to: 14), to: &machine)
        let one = feed(classPages(from: 14, to: 20).filter { $0.1.channelID == strap }, to: &machine) + machine.tick(at: start.addingTimeInterval(20))
        XCTAssertFalse(sent(one).contains(Self.statusRequest), "the other strap is heard")
        XCTAssertEqual(lostNotices(one), ["lost strap \(Self.otherStrap.device): silent for 5 s"])
    }

    /// A loop starved of its thread reads the ticks after the broadcasts: the strap that left for
    /// 13 s while the others were heard is back before any tick judged it. Its silence is judged
    /// from the arrival stamps when it returns: lost, then back, its series cut (the class lab on
    /// one starved processor logged no loss for a strap switched off for 13.5 s).
    func testASilenceNoTickSawIsJudgedFromTheStampsWhenTheStrapReturns() {
        var machine = scanningMachine()
        _ = feed(classPages(from: 1, to: 5), to: &machine)
        let others = feed(classPages(from: 5, to: 18).filter { $0.1.channelID == Self.otherStrap }, to: &machine)
        XCTAssertEqual(lostNotices(others), [])
        let back = feed(classPages(from: 18, to: 19).filter { $0.1.channelID == strap }, to: &machine)
        XCTAssertEqual(lostNotices(back), ["lost strap \(strap.device): silent for 14.0 s"])
        XCTAssertTrue(back.contains { if case .log(.notice, let message, _) = $0 { message == "strap \(strap.device) is back" } else { false } })
        XCTAssertEqual(machine.summary(of: strap.device)?.hasPrefix("live"), true)
        // Every strap silent together (the host, not the straps): no loss judged from the stamps.
        let stall = feed(classPages(from: 30, to: 31), to: &machine)
        XCTAssertEqual(lostNotices(stall), [])
    }

    /// A stick that does not answer the request within the answer timeout: the silent straps are
    /// lost all the same, and the notice says the stick did not answer either.
    func testAStickThatDoesNotAnswerStillLosesTheStrapsAndSaysSo() {
        var machine = scanningMachine()
        _ = feed(classPages(from: 1, to: 5), to: &machine)
        XCTAssertEqual(lostNotices(machine.tick(at: start.addingTimeInterval(11))), [])
        XCTAssertEqual(lostNotices(machine.tick(at: start.addingTimeInterval(13))), [])
        let lost = lostNotices(machine.tick(at: start.addingTimeInterval(14)))
        XCTAssertEqual(lost.count, 2)
        XCTAssertTrue(lost.allSatisfy { $0.hasSuffix("the stick did not answer a channel status request within 3 s either") }, "\(lost)")
    }

    private static let scanning = ANTCapabilities(
        maximumChannels: 8, maximumNetworks: 8, advancedOptions2: ANTCapabilities.extendedMessagesBit | ANTCapabilities.scanModeBit)

    func testTheContinuousScanSetup() {
        var machine = machine()
        let commands = setUp(&machine, capabilities: Self.scanning)
        XCTAssertEqual(commands, [
            .resetSystem, .requestMessage(channel: 0, messageID: 0x54), .setNetworkKey(network: 0, key: key),
            .assignChannel(channel: 0, type: 0x00, network: 0), .channelID(channel: 0, id: .wildcard),
            .channelRFFrequency(channel: 0, frequency: 57), .libConfig(flags: 0x80), .openRxScanMode,
        ])
        XCTAssertEqual(machine.mode, .scanning)
    }

    func testARefusedCommandNamesTheCommandAndTheStick() {
        var machine = machine()
        _ = machine.start(at: start)
        _ = machine.receive(.startup(reason: 0x20), at: start)
        _ = machine.receive(.capabilities(Self.scanning), at: start)
        let actions = machine.receive(.channelResponse(channel: 0, messageID: 0x46, code: .invalidMessage), at: start)
        XCTAssertEqual(failure(actions), ANTStickError(stick: "/dev/ttyUSB0", .refused(command: "set network key (0x46)", code: .invalidMessage)))
        XCTAssertEqual(failure(actions)?.description, "the ANT stick /dev/ttyUSB0 refused set network key (0x46): INVALID_MESSAGE")
    }

    func testAnUnansweredCommandTimesOutButAMissingStartupMessageDoesNot() {
        var machine = machine()
        XCTAssertEqual(sent(machine.start(at: start)), [.resetSystem])
        // No startup message: the machine goes on after the timeout.
        let next = machine.tick(at: start.addingTimeInterval(ANTStickMachine.answerTimeout))
        XCTAssertEqual(sent(next), [.requestMessage(channel: 0, messageID: 0x54)])
        XCTAssertNil(failure(next))
        let timeout = machine.tick(at: start.addingTimeInterval(2 * ANTStickMachine.answerTimeout))
        XCTAssertEqual(failure(timeout), ANTStickError(stick: "/dev/ttyUSB0", .noAnswer(command: "request message (0x4D)")))
    }

    func testAStickThatCannotScanFallsBackToPairedChannelsAndSaysSo() {
        var machine = machine()
        let commands = setUp(&machine, capabilities: ANTCapabilities(maximumChannels: 4, maximumNetworks: 3, advancedOptions2: 0))
        XCTAssertEqual(machine.mode, .paired(channels: 4))
        XCTAssertEqual(commands.filter { if case .openChannel = $0 { true } else { false } }.count, 4)
        XCTAssertTrue(commands.contains(.channelPeriod(channel: 3, period: 8070)))
        XCTAssertFalse(commands.contains(.openRxScanMode))
        // A channel's broadcast without the channel id: its id is asked for once, then its pages count.
        let page = ANTHeartRatePage(toggle: false, pageNumber: 0, beatTime: 1000, beatCount: 5, computedHeartRate: 70, content: .defaultData)
        let ask = machine.receive(.broadcastData(ANTBroadcast(channel: 2, page: page.bytes)), at: start)
        XCTAssertEqual(sent(ask), [.requestMessage(channel: 2, messageID: 0x51)])
        XCTAssertEqual(sent(machine.receive(.broadcastData(ANTBroadcast(channel: 2, page: page.bytes)), at: start)), [])
        _ = machine.receive(.channelID(channel: 2, id: strap), at: start)
        let message = ANTMessage.broadcastData(ANTBroadcast(channel: 2, page: page.bytes))
        XCTAssertEqual(machine.unknownStrap(in: message), strap.device)
    }

    func testOneHeartRatePerNewBeatLostAndFoundAgain() throws {
        var machine = scanningMachine()
        var date = start
        var beatTime: UInt16 = 65_000
        var count: UInt8 = 254
        var heartRates: [Double] = []
        func broadcast(_ page: ANTHeartRatePage) -> [ANTStickMachine.Action] { self.broadcast(page, to: &machine, at: date) }
        for beat in 0..<8 {
            count &+= 1
            beatTime &+= 1000
            // Four messages per beat (one repeats it three times); the toggle flips every four.
            for repeatIndex in 0..<4 {
                let page = ANTHeartRatePage(
                    toggle: beat % 2 == 1, pageNumber: 4, beatTime: beatTime, beatCount: count, computedHeartRate: 61,
                    content: .previousBeat(manufacturerSpecific: 0, previousBeatTime: beatTime &- 1000))
                let output = records(broadcast(page))
                for case .quantity(let sample) in output { heartRates.append(sample.quantity.value) }
                if repeatIndex > 0 { XCTAssertTrue(output.isEmpty, "a repeated beat publishes nothing") }
                date = date.addingTimeInterval(0.25)
            }
        }
        XCTAssertEqual(heartRates, Array(repeating: 61, count: 8), "one heart rate per beat, across the count's rollover")
        XCTAssertEqual(machine.summary(of: strap.device)?.hasPrefix("live, 61 bpm, 8 beats"), true)
        // Silent past the timeout: lost, the series being built is published.
        let lost = tickSilent(&machine, at: date.addingTimeInterval(6))
        XCTAssertFalse(records(lost).isEmpty, "the series is published when the strap is lost")
        XCTAssertEqual(machine.summary(of: strap.device)?.hasPrefix("lost"), true)
        date = date.addingTimeInterval(20)
        count &+= 30
        beatTime &+= 30_000
        let back = broadcast(ANTHeartRatePage(toggle: false, pageNumber: 0, beatTime: beatTime, beatCount: count, computedHeartRate: 64, content: .defaultData))
        XCTAssertEqual(records(back).count, 1, "found again: its beat counts")
        XCTAssertEqual(machine.summary(of: strap.device)?.hasPrefix("live, 64 bpm, 9 beats"), true)
    }

    /// A host too busy to read the stick for the timeout judges every strap lost, then reads
    /// the pages the stick kept: the first repeats the beat recorded last, which is not stored
    /// again (class lab on a loaded host: 311 such losses in one run, and up to 12 heart rates
    /// stored more than a strap sent).
    func testALossThatWasTheHostsOwnDoesNotStoreTheLastBeatAgain() throws {
        func heartRates(_ actions: [ANTStickMachine.Action]) -> Int {
            records(actions).filter { if case .quantity(let sample) = $0 { sample.type == .heartRate } else { false } }.count
        }
        var machine = scanningMachine()
        let page = ANTHeartRatePage(toggle: false, pageNumber: 0, beatTime: 4000, beatCount: 17, computedHeartRate: 70, content: .defaultData)
        XCTAssertEqual(heartRates(broadcast(page, to: &machine, at: start)), 1)
        _ = tickSilent(&machine, at: start.addingTimeInterval(6))
        XCTAssertEqual(machine.summary(of: strap.device)?.hasPrefix("lost"), true)
        let late = start.addingTimeInterval(6.1)
        XCTAssertEqual(heartRates(broadcast(page, to: &machine, at: late)), 0, "the beat is stored already")
        XCTAssertEqual(machine.summary(of: strap.device)?.hasPrefix("live"), true, "heard again")
        let next = ANTHeartRatePage(toggle: false, pageNumber: 0, beatTime: 4900, beatCount: 18, computedHeartRate: 71, content: .defaultData)
        XCTAssertEqual(heartRates(broadcast(next, to: &machine, at: late.addingTimeInterval(0.25))), 1)
    }

    /// Page 2 gives the serial number's upper half: trusted once the toggle changed, it goes into
    /// the metadata of the strap's samples from then on (HealthKit's device serial number key) and
    /// into its status line.
    func testPageTwosSerialNumberReachesTheSamplesAndTheStatus() throws {
        var machine = scanningMachine()
        var date = start
        var beatTime: UInt16 = 1000
        var count: UInt8 = 10
        var samples: [QuantitySample] = []
        var series: [HeartbeatSeriesSample] = []
        // A block of four messages with one new beat: page 4, or `content` under its number.
        func block(toggle: Bool, pageNumber: UInt8 = 4, content: ANTHeartRatePage.Content? = nil) {
            count &+= 1
            beatTime &+= 1000
            for _ in 0..<4 {
                let page = ANTHeartRatePage(
                    toggle: toggle, pageNumber: pageNumber, beatTime: beatTime, beatCount: count, computedHeartRate: 62,
                    content: content ?? .previousBeat(manufacturerSpecific: 0, previousBeatTime: beatTime &- 1000))
                for record in records(broadcast(page, to: &machine, at: date)) {
                    switch record {
                    case .quantity(let sample): samples.append(sample)
                    case .heartbeatSeries(let sample): series.append(sample)
                    default: break
                    }
                }
                date = date.addingTimeInterval(0.25)
            }
        }
        // Garmin's page 2 before the toggle was seen to change: not trusted, no serial.
        block(toggle: false, pageNumber: 2, content: .manufacturer(id: 1, serialNumber: 0x000D))
        XCTAssertEqual(samples.count, 1)
        XCTAssertNil(samples.last?.metadata.deviceSerialNumber)
        block(toggle: true)
        block(toggle: false, pageNumber: 2, content: .manufacturer(id: 1, serialNumber: 0x000D))
        block(toggle: true)
        XCTAssertEqual(samples.count, 4)
        XCTAssertNil(samples[1].metadata.deviceSerialNumber, "before page 2")
        // 0x000D above the 16-bit number 0x2CCC: 863436, the 20-bit device number.
        XCTAssertEqual(samples[2].metadata.deviceSerialNumber, "863436")
        XCTAssertEqual(samples[3].metadata.deviceSerialNumber, "863436")
        XCTAssertEqual(samples[3].device?.manufacturer, "Garmin")
        XCTAssertEqual(machine.summary(of: strap.device), "live, 62 bpm, 4 beats, Garmin, serial 863436")
        // The series' next version carries it too: here the finished one, published when the
        // strap is lost (its provisional versions come every 10 s of beats).
        for record in records(tickSilent(&machine, at: date.addingTimeInterval(6))) {
            if case .heartbeatSeries(let sample) = record { series.append(sample) }
        }
        XCTAssertNil(series.last?.metadata[.provisional])
        XCTAssertEqual(series.last?.metadata.deviceSerialNumber, "863436", "the series carries it too")
    }

    func testGarbageIsLoggedOnceAndThenAtMostEveryTenSeconds() {
        var machine = machine()
        func logged(_ actions: [ANTStickMachine.Action]) -> [String] {
            actions.compactMap { if case .log(_, let message, _) = $0 { message } else { nil } }
        }
        XCTAssertEqual(logged(machine.resynchronised(skipping: 7, at: start)), ["skipped 7 bytes that were no ANT frame"])
        for second in 1..<10 {
            XCTAssertEqual(logged(machine.resynchronised(skipping: 3, at: start.addingTimeInterval(Double(second)))), [])
        }
        XCTAssertEqual(
            logged(machine.resynchronised(skipping: 5, at: start.addingTimeInterval(10))),
            ["skipped 32 bytes that were no ANT frame in 10 runs over the last 10 s"])
    }

    func testARestoredStrapDoesNotStoreItsLastBeatTwice() throws {
        var machine = scanningMachine()
        let stored = StrapCheckpoint(beatTime: 4000, beatCount: 17, lastBeat: start.addingTimeInterval(-0.5), received: start.addingTimeInterval(-0.5))
        _ = machine.meet(strap.device, restored: stored, at: start)
        let repeated = ANTHeartRatePage(toggle: false, pageNumber: 0, beatTime: 4000, beatCount: 17, computedHeartRate: 70, content: .defaultData)
        XCTAssertTrue(records(machine.receive(.broadcastData(ANTBroadcast(channel: 0, page: repeated.bytes, channelID: strap)), at: start)).isEmpty)
        let next = ANTHeartRatePage(toggle: false, pageNumber: 0, beatTime: 4900, beatCount: 18, computedHeartRate: 70, content: .defaultData)
        let actions = machine.receive(.broadcastData(ANTBroadcast(channel: 0, page: next.bytes, channelID: strap)), at: start.addingTimeInterval(0.9))
        XCTAssertEqual(records(actions).count, 1, "the new beat's heart rate; no series beat is counted from the stored one")
        let checkpoints = actions.compactMap { if case .publish(_, let checkpoint?) = $0 { checkpoint } else { nil } }
        XCTAssertEqual(try checkpoints.map { try StrapCheckpoint($0).beatCount }, [18])
    }

    /// The frames a gateway killed and restarted at once sees: a legacy strap (no page 4) whose
    /// beat 13 was never received, so beat 14 came without an interval and the series never placed
    /// it; the run was killed right after beat 14's checkpoint was committed. Every beat the
    /// restarted run places must be a beat the strap made: the receiver here hears each beat at
    /// the instant the strap makes it, so each placed beat falls on one. Counting from the stored
    /// beat (14 → 15 is one) placed beat 15 an interval after beat 12 (class of 30 straps killed
    /// and restarted: 5 and 13 such intervals in 2 of 5 restarts).
    func testARestartPlacesOnlyBeatsTheStrapMade() throws {
        // The strap's beats: count → beat time (1/1024 s).
        let made: [(count: UInt8, time: UInt16)] = [(10, 0), (11, 800), (12, 1610), (13, 2400), (14, 3220), (15, 4030), (16, 4850), (17, 5660)]
        func date(_ time: UInt16) -> Date { start.addingTimeInterval(Double(time) / 1024) }
        func page(_ beat: (count: UInt8, time: UInt16)) -> ANTBroadcast {
            let page = ANTHeartRatePage(toggle: false, pageNumber: 0, beatTime: beat.time, beatCount: beat.count, computedHeartRate: 75, content: .defaultData)
            return ANTBroadcast(channel: 0, page: page.bytes, channelID: strap)
        }
        var first = scanningMachine()
        var committed: SourceCheckpoint?
        for beat in made.prefix(5) where beat.count != 13 {
            for action in broadcast(try ANTHeartRatePage(bytes: page(beat).page), to: &first, at: date(beat.time)) {
                if case .publish(_, let checkpoint?) = action { committed = checkpoint }
            }
        }
        let restored = try StrapCheckpoint(XCTUnwrap(committed))
        XCTAssertEqual(restored.beatCount, 14)

        var restarted = scanningMachine()
        let restartedAt = date(3220).addingTimeInterval(0.4)
        _ = restarted.meet(strap.device, restored: restored, at: restartedAt)
        var series: [HeartbeatSeriesSample] = []
        func collect(_ actions: [ANTStickMachine.Action]) {
            series += records(actions).compactMap { if case .heartbeatSeries(let sample) = $0 { sample } else { nil } }
        }
        collect(restarted.receive(.broadcastData(page(made[4])), at: restartedAt))
        for beat in made.suffix(3) { collect(restarted.receive(.broadcastData(page(beat)), at: date(beat.time))) }
        collect(restarted.finish())

        let beatDates = Set(made.map { date($0.time).timeIntervalSince1970 })
        let placed = series.last.map { last in last.beats.map { last.startDate.addingTimeInterval($0.timeSinceSeriesStart) } } ?? []
        XCTAssertFalse(placed.isEmpty)
        for beat in placed {
            XCTAssertTrue(beatDates.contains { abs($0 - beat.timeIntervalSince1970) < 1e-6 }, "\(beat) is no beat the strap made")
        }
        XCTAssertEqual(placed.map { $0.timeIntervalSince(start) * 1024 }.map { $0.rounded() }, [4030, 4850, 5660])
    }

    /// A checkpoint's payload (written without `JSONEncoder`) reads back as the state it holds,
    /// and is the JSON `JSONEncoder` writes for it with `.secondsSince1970` dates.
    func testACheckpointReadsBackAsItsState() throws {
        for state in [
            StrapCheckpoint(beatTime: 65535, beatCount: 255, lastBeat: Date(timeIntervalSince1970: 1_764_000_000.123456), received: start),
            StrapCheckpoint(beatTime: 0, beatCount: 0, lastBeat: nil, received: Date(timeIntervalSince1970: 0.1)),
        ] {
            let checkpoint = try state.checkpoint(key: strap.device.description)
            XCTAssertEqual(checkpoint.namespace, StrapCheckpoint.namespace)
            XCTAssertEqual(try StrapCheckpoint(checkpoint), state)
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            XCTAssertEqual(
                try JSONSerialization.jsonObject(with: checkpoint.payload) as? NSDictionary,
                try JSONSerialization.jsonObject(with: encoder.encode(state)) as? NSDictionary)
        }
        XCTAssertThrowsError(try StrapCheckpoint(beatTime: 1, beatCount: 1, lastBeat: nil, received: Date(timeIntervalSince1970: .nan))
            .checkpoint(key: "ant:120:1"))
    }
}

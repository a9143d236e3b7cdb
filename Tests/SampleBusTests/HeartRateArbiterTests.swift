import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import SampleBus
import Synchronization
import XCTest

/// One strap heard on two paths feeds its wearer once (issue #48): the path with RR intervals
/// wins while it lasts, the other takes over after ``HeartRatePathChoice/handoverAfter`` of
/// silence, and no heart rate reaches the sinks twice. Run through a real bus and publisher on a
/// manual clock; what the sink receives is what a store would store.
final class HeartRateArbiterTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let ids = SampleIDGenerator(seed: 3, milliseconds: { 1_800_000_000_000 })

    /// The connected path of a Polar strap: a serial-numbered device with its address.
    let connected = Device(
        name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", localIdentifier: "Polar Electro Oy/C7A1",
        radioIdentifier: "A0:9E:1A:12:34:56")
    /// The same strap's broadcast.
    let broadcast = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "1A2B3C4D", radioIdentifier: "1A2B3C4D")
    /// A dual ANT+/Bluetooth strap's ANT+ path; its Bluetooth path is ``wahoo``.
    let ant = Device(name: "ANT+ heart-rate strap 4660", localIdentifier: "ant:120:4660", radioIdentifier: "ant:120:4660")
    let wahoo = Device(name: "TICKR 1234", localIdentifier: "Wahoo/998877", radioIdentifier: "C0:11:22:33:44:55")

    /// A bus with one collecting sink and the arbiter on `clock`, grouping by `group`.
    final class Rig: Sendable {
        let clock = ManualClock()
        let bus: SampleBus
        let publisher: SamplePublisher
        let arbiter: HeartRateArbiter

        init(group: @escaping @Sendable (Device) -> String? = HeartRateArbiter.strapGroup) {
            arbiter = HeartRateArbiter(clock: clock, group: group)
            bus = SampleBus(
                sinks: [(name: "store", queue: QueueConfiguration(capacity: 100_000, policy: .block), accepts: { _ in true }, status: nil)],
                arbiter: arbiter)
            publisher = SamplePublisher(bus: bus, status: nil)
        }

        /// Everything the sink got, once the bus is finished.
        func collected() async throws -> [HealthRecord] {
            bus.finish()
            let sink = CollectingSink()
            guard let inbox = bus.subscription(named: "store")?.inbox else { throw CancellationError() }
            let board = StatusBoard()
            try await sink.run(
                inbox: inbox,
                context: SinkContext(
                    logger: Logger(label: "test", sink: RecordingLogSink()), clock: clock,
                    status: board.register(name: "store", kind: "store", role: .sink)))
            return sink.records
        }
    }

    func heartRate(_ bpm: Double, at seconds: Double, from device: Device) throws -> HealthRecord {
        let date = start.addingTimeInterval(seconds)
        return .quantity(try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: date, end: date, device: device))
    }

    func series(at seconds: Double, from device: Device) throws -> HealthRecord {
        let date = start.addingTimeInterval(seconds)
        return .heartbeatSeries(try HeartbeatSeriesSample(
            id: ids.next(), start: date.addingTimeInterval(-1), end: date,
            beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: true), Heartbeat(timeSinceSeriesStart: 0.9, precededByGap: false)],
            device: device))
    }

    /// Plays a timeline: at each event's time (seconds from the start, in order) the clock is
    /// advanced there and the event's records are published.
    func play(_ rig: Rig, _ events: [(at: Double, records: [HealthRecord])]) async {
        var now = 0.0
        for event in events.sorted(by: { $0.at < $1.at }) {
            rig.clock.advance(by: .milliseconds(Int64(((event.at - now) * 1000).rounded())))
            now = event.at
            await rig.publisher.publish(event.records)
        }
    }

    static func heartRates(_ records: [HealthRecord]) -> [QuantitySample] {
        records.compactMap { if case .quantity(let sample) = $0, sample.type == .heartRate { sample } else { nil } }
    }

    func testTheConnectedPathWithRRFeedsTheStrapAndTheBroadcastIsNotStoredTwice() async throws {
        let rig = Rig()
        var events: [(at: Double, records: [HealthRecord])] = []
        for second in 0..<20 {
            let t = Double(second)
            events.append((t, [try heartRate(120 + t, at: t, from: connected), try series(at: t, from: connected)]))
            // The broadcast of the same beat, a quarter of a second later.
            events.append((t + 0.25, [try heartRate(120 + t, at: t + 0.25, from: broadcast)]))
        }
        await play(rig, events)
        let records = try await rig.collected()
        let rates = Self.heartRates(records)
        XCTAssertEqual(rates.count, 20, "one heart rate a second, not two")
        XCTAssertTrue(rates.allSatisfy { $0.device == connected }, "the path with RR intervals wins")
        XCTAssertEqual(Set(rates.map(\.startDate)).count, 20, "no second copy of any moment")
        XCTAssertEqual(records.filter { if case .heartbeatSeries = $0 { true } else { false } }.count, 20)
        XCTAssertEqual(rig.arbiter.droppedCount, 20)
        XCTAssertEqual(rig.arbiter.counts, HeartRateArbiter.Counts(droppedReadings: 20, handovers: 0), "the connection fed it from the first beat")
    }

    func testTheRRPathTakesOverFromABroadcastHeardFirst() async throws {
        let rig = Rig()
        var events: [(at: Double, records: [HealthRecord])] = []
        // The broadcast alone for 3 s, then the connection comes up: its first beats with RR take over.
        for second in 0..<8 {
            let t = Double(second)
            events.append((t + 0.25, [try heartRate(100, at: t + 0.25, from: broadcast)]))
            if second >= 3 { events.append((t, [try heartRate(101, at: t, from: connected), try series(at: t, from: connected)])) }
        }
        await play(rig, events)
        let rates = Self.heartRates(try await rig.collected())
        XCTAssertEqual(rates.map(\.device?.pathIdentity?.canonical), ["1A2B3C4D", "1A2B3C4D", "1A2B3C4D"] + Array(repeating: "A0:9E:1A:12:34:56", count: 5))
        XCTAssertEqual(rig.arbiter.handoverCount, 1, "one handover: the broadcast to the connection")
    }

    func testWhenTheConnectionDropsTheBroadcastTakesOverWithin2SecondsAndGivesBackWhenItReturns() async throws {
        let rig = Rig()
        var events: [(at: Double, records: [HealthRecord])] = []
        for second in 0..<30 {
            let t = Double(second)
            // The link is lost after the beat at 9 s and back at 20 s.
            if second < 10 || second >= 20 {
                events.append((t, [try heartRate(130, at: t, from: connected), try series(at: t, from: connected)]))
            }
            events.append((t + 0.5, [try heartRate(131, at: t + 0.5, from: broadcast)]))
        }
        await play(rig, events)
        let rates = Self.heartRates(try await rig.collected())
        let fromBroadcast = rates.filter { $0.device == broadcast }.map { $0.startDate.timeIntervalSince(start) }
        // The connection's next beat was due at 10 s; the broadcast feeds the strap from 11.5 s
        // (1.5 s of silence), within 2 s of the beat that did not come, until the link is back.
        XCTAssertEqual(fromBroadcast.first, 11.5)
        XCTAssertLessThanOrEqual(try XCTUnwrap(fromBroadcast.first) - 10, 2)
        XCTAssertEqual(fromBroadcast, stride(from: 11.5, through: 19.5, by: 1).map { $0 })
        let fromConnection = rates.filter { $0.device == connected }.map { $0.startDate.timeIntervalSince(start) }
        XCTAssertEqual(fromConnection, (0..<10).map(Double.init) + (20..<30).map(Double.init), "back with its RR at 20 s")
        // At every moment one path: no two heart rates within half a second of each other.
        let dates = rates.map { $0.startDate.timeIntervalSince(start) }.sorted()
        XCTAssertTrue(zip(dates, dates.dropFirst()).allSatisfy { $1 - $0 >= 0.5 }, "\(dates)")
    }

    func testAParticipantListingAnAntAndABluetoothIdentityIsFedOnce() async throws {
        // Ana lists both ids of her dual strap; the strap grouping alone would keep them apart.
        let rig = Rig(group: { device in
            Device.matches(device, selection: ["ANT:120:4660", "c0-11-22-33-44-55"]) ? "participant:Ana" : HeartRateArbiter.strapGroup(device)
        })
        var events: [(at: Double, records: [HealthRecord])] = []
        for second in 0..<10 {
            let t = Double(second)
            events.append((t, [try heartRate(140, at: t, from: ant), try series(at: t, from: ant)]))
            events.append((t + 0.1, [try heartRate(140, at: t + 0.1, from: wahoo), try series(at: t + 0.1, from: wahoo)]))
        }
        await play(rig, events)
        let records = try await rig.collected()
        let rates = Self.heartRates(records)
        XCTAssertEqual(rates.count, 10)
        XCTAssertTrue(rates.allSatisfy { $0.device == ant }, "both carry RR: the first path keeps the wearer while it lasts")
        let series = records.compactMap { if case .heartbeatSeries(let s) = $0 { s } else { nil } }
        XCTAssertTrue(series.allSatisfy { $0.device == ant }, "no second series of the same beats")
        XCTAssertEqual(rig.arbiter.owner(of: "participant:Ana"), DeviceIdentity("ant:120:4660"))
    }

    func testAStrapMovedToAnotherParticipantBetweenClassesFeedsTheNewOne() async throws {
        // Class 1: Ana wears the Polar strap (both paths), Ben the Wahoo. Class 2: the Polar
        // strap is Ben's and the Wahoo nobody's.
        struct Roster: Sendable { var polar: String; var wahoo: String? }
        let roster = Mutex(Roster(polar: "Ana", wahoo: "Ben"))
        let rig = Rig(group: { device in
            let now = roster.withLock { $0 }
            if Device.matches(device, selection: ["1A2B3C4D"]) { return "participant:\(now.polar)" }
            if Device.matches(device, selection: ["c0:11:22:33:44:55"]), let wahoo = now.wahoo { return "participant:\(wahoo)" }
            return HeartRateArbiter.strapGroup(device)
        })
        var events: [(at: Double, records: [HealthRecord])] = []
        for second in 0..<5 {
            let t = Double(second)
            events.append((t, [try heartRate(110, at: t, from: connected), try series(at: t, from: connected)]))
            events.append((t + 0.25, [try heartRate(110, at: t + 0.25, from: broadcast)]))
            events.append((t + 0.5, [try heartRate(90, at: t + 0.5, from: wahoo)]))
        }
        await play(rig, events)
        XCTAssertEqual(rig.arbiter.owner(of: "participant:Ana"), DeviceIdentity("A0:9E:1A:12:34:56"))
        XCTAssertEqual(rig.arbiter.owner(of: "participant:Ben"), DeviceIdentity("C0:11:22:33:44:55"))

        // Between classes, a minute later: the strap is handed to Ben; only its broadcast is heard.
        roster.withLock { $0 = Roster(polar: "Ben", wahoo: nil) }
        rig.clock.advance(by: .seconds(60))
        var second: [(at: Double, records: [HealthRecord])] = []
        for s in 0..<5 {
            let t = 65 + Double(s)
            second.append((t, [try heartRate(115, at: t, from: broadcast)]))
            second.append((t + 0.5, [try heartRate(95, at: t + 0.5, from: wahoo)]))
        }
        await play(rig, second.map { (at: $0.at - 65, records: $0.records) })
        let rates = Self.heartRates(try await rig.collected())
        let classTwo = rates.filter { $0.startDate.timeIntervalSince(start) >= 65 }
        XCTAssertEqual(classTwo.filter { $0.device == broadcast }.count, 5, "Ben is fed by the strap he was handed")
        XCTAssertEqual(classTwo.filter { $0.device == wahoo }.count, 5, "the freed strap is its own wearer again")
        XCTAssertEqual(rig.arbiter.owner(of: "participant:Ben"), DeviceIdentity("1A2B3C4D"))
        let classOne = rates.filter { $0.startDate.timeIntervalSince(start) < 65 }
        XCTAssertEqual(classOne.filter { $0.device == broadcast }.count, 0, "in class 1 Ana's connection fed her")
        XCTAssertEqual(classOne.count, 10)
    }

    func testOtherRecordsAndDevicesWithoutAStrapPass() async throws {
        let rig = Rig()
        let steps = HealthRecord.quantity(try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(10, .count), start: start, end: start, device: connected))
        let anonymous = try heartRate(70, at: 0, from: Device())
        await rig.publisher.publish([try heartRate(70, at: 0, from: connected), steps, try heartRate(70, at: 0.1, from: broadcast), anonymous])
        let records = try await rig.collected()
        XCTAssertEqual(records.count, 3, "the broadcast's copy dropped, the steps and a device without identity kept")
        XCTAssertEqual(records.map(\.endDate), [start, start, start])
    }
}

import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLiteStore
import GatewayRuntime
import GatewayTime
import SampleBus
import Workouts
import WorkoutPresentation
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// A box without a real-time clock, on an injected clock pair (``ManualClock``: wall and
/// monotonic time; ``ManualClockTrust``: synchronisation state and base): a real gateway (bus,
/// SQLite sink, workout controller) and the clock watch with the store's correction, as
/// `healthgate run` wires them.
final class ClockStepTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "clock-step" }

    /// The true time while the box believes it is 1970: 56 years later.
    static let trueBoot = Date(timeIntervalSince1970: 1_795_600_000)  // 2026-11-25T08:26:40Z

    func testSamplesTakenBeforeSynchronizationGetTheirTrueTimesWhenTheClockSteps() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 0))
        let trust = ManualClockTrust(clock: clock, state: .unsynchronized)
        let rig = try Rig(clock: clock, trust: trust, path: path, directory: directory)
        defer { rig.stop() }
        // Two minutes of heart rate, one a second, stamped with the gateway's 1970.
        for second in 0..<120 {
            try await rig.feed(.heartRate(Double(100 + second % 40)), stored: second + 1)
            clock.advance(by: .seconds(1))
        }
        // A meter's reading with its own clock set right: it keeps its time.
        let meterTime = Self.trueBoot.addingTimeInterval(60)
        try await rig.feed(.deviceClockReading(at: meterTime), stored: 121)
        let beforeStep = try await HealthStore(path: path, access: .readOnly).latestAnchor()

        // timesyncd: the wall clock steps by +56 years, then STA_UNSYNC is cleared.
        let step = Self.trueBoot.timeIntervalSince1970
        clock.step(by: step)
        trust.set(.synchronized(maximumErrorSeconds: 0.02))
        clock.advance(by: .seconds(5))  // the watch's next look
        // The heart rates are two quantity series (a minute each): two records move.
        try await waitUntil("the store moved the samples") { rig.log.contains("moved 2 records") }
        try await rig.feed(.heartRate(99), stored: 122)

        let samples = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate)
        XCTAssertEqual(samples.count, 121)
        let taken = samples.filter { $0.quantity.value != 99 }.sorted { $0.startDate < $1.startDate }
        XCTAssertEqual(taken.count, 120)
        for (second, sample) in taken.enumerated() {
            let truth = Self.trueBoot.addingTimeInterval(Double(second))
            XCTAssertEqual(sample.startDate.timeIntervalSince(truth), 0, accuracy: 1, "sample \(second)")
            XCTAssertEqual(sample.metadata[.clockCorrected], .double(step))
            XCTAssertEqual(sample.metadata.clockBase, trust.clockBase())
        }
        let after = try XCTUnwrap(samples.first { $0.quantity.value == 99 })
        XCTAssertEqual(after.startDate.timeIntervalSince(Self.trueBoot), 125, accuracy: 1)
        XCTAssertNil(after.metadata[.clockCorrected], "taken after the step: nothing to correct")
        let meter = try await HealthStore(path: path, access: .readOnly).samples(of: .bodyTemperature)
        XCTAssertEqual(meter.map(\.startDate), [meterTime], "dated by the device's clock: left as it is")
        XCTAssertNil(meter.first?.metadata[.clockCorrected])
        XCTAssertTrue(rig.log.contains("clock: the wall clock stepped by +\(String(format: "%.3f", step)) s"), "\(rig.log.entries.map(\.message))")
        XCTAssertTrue(rig.log.contains("clock: synchronized (maximum error 0.020 s)"))

        // Every follower sees the moved series again, at new anchors, as the same uuids (so each
        // quantity keeps its id), and the series of the reading after the step.
        let changes = try await HealthStore(path: path, access: .readOnly).changes(since: beforeStep)
        let series = Set((taken + [after]).compactMap { sample -> SampleID? in
            guard case .string(let id)? = sample.metadata[.series] else { return nil }
            return SampleID(string: id)
        })
        XCTAssertEqual(series.count, 3)
        XCTAssertEqual(Set(changes.added.map(\.id)), series)
        XCTAssertTrue(changes.deleted.isEmpty, "a moved series is a new version, not a deletion")
    }

    /// A step back of an hour in the middle of a workout (an administrator's `date -s`, or NTP
    /// stepping again) changes none of the figures a run without the step has.
    func testAStepBackInTheMiddleOfAWorkoutChangesNoneOfItsFigures() async throws {
        let plain = try await workoutFigures(stepBackAt: nil, file: "plain.sqlite")
        let stepped = try await workoutFigures(stepBackAt: 50, file: "stepped.sqlite")
        XCTAssertEqual(stepped.elapsedSeconds, 100)
        XCTAssertEqual(stepped.elapsedSeconds, plain.elapsedSeconds)
        XCTAssertEqual(stepped.zoneSeconds, plain.zoneSeconds)
        XCTAssertEqual(try XCTUnwrap(stepped.energyKilocalories), try XCTUnwrap(plain.energyKilocalories), accuracy: 1e-9)
        XCTAssertEqual(stepped.heartRate.average, plain.heartRate.average)
        XCTAssertEqual(stepped.gapSeconds, plain.gapSeconds)
        XCTAssertGreaterThan(plain.zoneSeconds.reduce(0, +), 90, "the run spends its time in zones")
        XCTAssertEqual(stepped.duration, plain.duration)
    }

    /// The board's lost-sensor flag is measured on the monotonic clock: a step of an hour back
    /// does not keep a silent strap live for an hour, and a step forward does not flag a live one.
    func testTheBoardsLostSensorFlagIgnoresStepsOfTheWallClock() async throws {
        let clock = ManualClock(start: Self.trueBoot)
        let trust = ManualClockTrust(clock: clock, state: .synchronized(maximumErrorSeconds: 0.01))
        let rig = try Rig(clock: clock, trust: trust, path: path, directory: directory)
        defer { rig.stop() }
        let board = LiveBoard(workouts: rig.workouts, clock: clock)
        let strap = Device(name: "Strap", localIdentifier: "AA:01")
        func reading() throws -> HealthRecord {
            .quantity(try QuantitySample(
                id: SampleIDGenerator(seed: 9).next(), type: .heartRate, quantity: Quantity(120, .countPerMinute),
                start: clock.now(), end: clock.now(), device: strap))
        }
        // The gateway's bus gives every batch to the board and to the workouts (whose sign-in
        // state offers the strap nobody wears as a new strap).
        func ingest() throws {
            let batch = [try reading()]
            rig.workouts.ingest(batch)
            board.ingest(batch)
        }
        try ingest()
        clock.step(by: -3600)
        clock.advance(by: .seconds(LiveBoardModel.lostAfterSeconds + 1))
        XCTAssertEqual(board.snapshot().tiles.first?.sensor, .lost, "silent for 4 s, whatever the wall clock says")

        try ingest()
        clock.step(by: 3600)
        XCTAssertEqual(board.snapshot().tiles.first?.sensor, .live, "a reading just now, an hour later by the wall clock")
        XCTAssertEqual(board.snapshot().tiles.first?.secondsSinceReading, 0)
    }

    struct Figures {
        var elapsedSeconds: Double
        var zoneSeconds: [Double]
        var energyKilocalories: Double?
        var heartRate: WorkoutSnapshot.HeartRate
        var gapSeconds: Double
        var duration: Double
    }

    /// A 100 s run with heart rate every second climbing through the zones, on a synchronised
    /// clock; with `stepBackAt`, the wall clock steps back 3600 s at that second.
    func workoutFigures(stepBackAt: Int?, file: String) async throws -> Figures {
        let clock = ManualClock(start: Self.trueBoot)
        let trust = ManualClockTrust(clock: clock, state: .synchronized(maximumErrorSeconds: 0.01))
        let rig = try Rig(clock: clock, trust: trust, path: directory.appendingPathComponent(file).path, directory: directory)
        defer { rig.stop() }
        try await rig.workouts.main.start(activity: .running)
        for second in 0..<100 {
            if second == stepBackAt {
                clock.step(by: -3600)
                // The watch looks 5 s later: five samples are taken on the new clock before it.
                try await waitUntil("the watch sleeps") { clock.sleeperCount >= 1 }
            }
            try await rig.feed(.heartRate(110 + Double(second)), stored: second + 1)
            clock.advance(by: .seconds(1))
            if let stepBackAt, second == stepBackAt + 5 {
                try await waitUntil("the workout was rebuilt") { rig.log.contains("workout journal entries dated before the step") }
            }
        }
        let snapshot = try await rig.workouts.main.end()
        let id = try XCTUnwrap(snapshot.workoutID)
        let store = rig.store
        try await waitUntil("the workout is stored") { (try? await store.workout(id: id)) != nil }
        let stored = try await store.workout(id: id)
        let workout = try XCTUnwrap(stored).workout
        return Figures(
            elapsedSeconds: snapshot.elapsedSeconds, zoneSeconds: snapshot.zoneSeconds,
            energyKilocalories: snapshot.energyKilocalories, heartRate: snapshot.heartRate, gapSeconds: snapshot.gapSeconds,
            duration: workout.duration)
    }
}

/// What the test source publishes, each at the gateway clock's now.
enum Feed: Sendable {
    case heartRate(Double)
    /// A thermometer's reading dated by its own clock.
    case deviceClockReading(at: Date)
}

/// A source that publishes what the test feeds it.
struct FeedSource: SampleSource {
    let feed: AsyncStream<Feed>
    let ids = SampleIDGenerator(seed: 31)

    func run(context: SourceContext) async throws {
        for await item in feed {
            let now = context.clock.now()
            switch item {
            case .heartRate(let bpm):
                await context.publisher.publish(.quantity(try QuantitySample(
                    id: ids.next(), type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: now, end: now,
                    device: Script.strap)))
            case .deviceClockReading(let date):
                await context.publisher.publish(.quantity(try QuantitySample(
                    id: ids.next(), type: .bodyTemperature, quantity: Quantity(36.6, .degreeCelsius), start: date, end: date,
                    device: Script.other, metadata: [.deviceClock: .bool(true)])))
            }
        }
    }
}

/// A gateway as `healthgate run` builds it, on the clock pair: the feed source, the SQLite sink,
/// the workouts (sink and source), and the clock watch with the store's correction.
final class Rig: Sendable {
    let store: HealthStore
    let workouts: ParticipantWorkouts
    let log = RecordingLogSink()
    let continuation: AsyncStream<Feed>.Continuation
    let tasks: [Task<Void, Never>]
    let shutdown = ShutdownSignal()

    init(clock: ManualClock, trust: ManualClockTrust, path: String, directory: URL) throws {
        store = try HealthStore(path: path)
        let logger = Logger(label: "gateway", sink: log, level: .debug)
        let base: @Sendable () -> ClockBase = { trust.clockBase() }
        workouts = ParticipantWorkouts(
            roster: ParticipantRoster(participants: [], defaultProfile: scriptedProfile), store: StoredWorkoutJournal(store: store, clock: clock),
            clock: clock, ids: SampleIDGenerator(seed: 5), logger: logger, clockBase: base)
        let sink = try SQLiteSink(
            settings: .init(batchSize: 500, batchWindow: .zero),
            environment: TestEnvironment.make(name: "sqlite", clock: clock, directory: directory, store: store))
        let (feed, continuation) = AsyncStream<Feed>.makeStream()
        self.continuation = continuation
        let gateway = Gateway.feeding(
            workouts, from: ConfiguredSource(name: "feed", kind: "feed", source: FeedSource(feed: feed)),
            storingIn: ConfiguredSink(name: "sqlite", kind: "sqlite", queue: QueueConfiguration(), sink: sink),
            clock: clock, logger: logger, clockBase: base)
        let correction = ClockStepCorrection(store: store, workouts: workouts, logger: logger, clock: clock)
        let watch = ClockWatch(trust: trust, clock: clock, logger: logger) { base, previous in await correction(onto: base, from: previous) }
        let shutdown = shutdown
        tasks = [
            Task { await gateway.run(shutdown: shutdown) },
            Task { try? await watch.run() },
        ]
    }

    /// Publishes `item` and waits until the store holds `stored` heart-rate and temperature
    /// samples in all.
    func feed(_ item: Feed, stored: Int) async throws {
        continuation.yield(item)
        let store = store
        try await waitUntil("\(stored) samples stored") {
            let rates = try await store.samples(of: .heartRate).count
            let temperatures = try await store.samples(of: .bodyTemperature).count
            return rates + temperatures >= stored
        }
    }

    func stop() {
        continuation.finish()
        _ = shutdown.requestStop()
        tasks[1].cancel()
    }
}

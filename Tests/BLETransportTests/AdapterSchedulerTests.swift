import BLETransport
import BLEProfileKit
import Foundation
import GatewayTesting
import HealthModel
import GatewayRuntime
import Synchronization
import XCTest

/// The adapter's connection scheduler as a value with a ManualClock: one attempt at a time in
/// arrival order, device slots, the retry budget, and the watchdog's two triggers.
final class AdapterSchedulerTests: XCTestCase {
    func scheduler(_ limits: AdapterScheduler.Limits, clock: ManualClock = ManualClock()) -> AdapterScheduler {
        AdapterScheduler(adapter: "hci0", limits: limits, clock: clock)
    }

    func testOneAttemptAtATimeInArrivalOrderAndACancelledWaiterLeavesTheLine() async throws {
        let scheduler = scheduler(AdapterScheduler.Limits())
        let started = StartOrder()
        let first = try await scheduler.beginAttempt()
        @Sendable func waiter(_ name: String) -> Task<AdapterScheduler.Attempt, any Error> {
            Task { [scheduler, started] in
                let attempt = try await scheduler.beginAttempt()
                started.names.withLock { $0.append(name) }
                return attempt
            }
        }
        let b = waiter("b")
        try await waitUntil("b in line") { scheduler.snapshot.waiting == 1 }
        let c = waiter("c")
        try await waitUntil("c in line") { scheduler.snapshot.waiting == 2 }
        let d = waiter("d")
        try await waitUntil("d in line") { scheduler.snapshot.waiting == 3 }
        XCTAssertTrue(scheduler.snapshot.attempting)
        c.cancel()
        try await waitUntil("c left the line") { scheduler.snapshot.waiting == 2 }
        XCTAssertEqual(started.names.withLock { $0 }, [])

        _ = scheduler.failed(first, code: .connectFailed)
        let second = try await b.value
        XCTAssertEqual(started.names.withLock { $0 }, ["b"])
        scheduler.connected(second)
        let third = try await d.value
        XCTAssertEqual(started.names.withLock { $0 }, ["b", "d"])
        scheduler.connected(third)
        XCTAssertEqual(scheduler.snapshot.links, 2)
        scheduler.released()
        XCTAssertEqual(scheduler.snapshot.links, 1)
        do {
            _ = try await c.value
            XCTFail("the cancelled waiter started")
        } catch is CancellationError {}
    }

    func testDeviceSlotsAreBoundedAndGivenBack() {
        let scheduler = scheduler(AdapterScheduler.Limits(connections: 2))
        XCTAssertTrue(scheduler.claimSlot())
        XCTAssertTrue(scheduler.claimSlot())
        XCTAssertFalse(scheduler.claimSlot())
        scheduler.releaseSlot()
        XCTAssertTrue(scheduler.claimSlot())
        XCTAssertEqual(scheduler.snapshot.summary(scheduler.limits),
            "2/2 devices, 0 links, 0 waiting, 0/30 failed attempts in the last minute, 0 power cycles")
    }

    /// Two failures use a budget of two per minute: the next attempt waits until the first
    /// failure is a minute old.
    func testTheRetryBudgetMakesTheNextAttemptWait() async throws {
        let clock = ManualClock()
        let scheduler = scheduler(AdapterScheduler.Limits(failedAttemptsPerMinute: 2), clock: clock)
        _ = scheduler.failed(try await scheduler.beginAttempt(), code: .connectFailed)
        clock.advance(by: .seconds(10))
        _ = scheduler.failed(try await scheduler.beginAttempt(), code: .connectFailed)
        let next = Task { try await scheduler.beginAttempt() }
        try await waitUntil("the budget wait") { clock.sleeperCount == 1 }
        XCTAssertEqual(scheduler.snapshot.failuresInLastMinute, 2)
        clock.advance(by: .seconds(49))
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertFalse(scheduler.snapshot.attempting, "started before the first failure was a minute old")
        clock.advance(by: .seconds(1))
        let attempt = try await next.value
        XCTAssertTrue(scheduler.snapshot.attempting)
        XCTAssertEqual(scheduler.snapshot.failuresInLastMinute, 1)
        scheduler.connected(attempt)
    }

    /// Three InProgress answers in a row ask for one power cycle; more do not until the adapter
    /// sees a device again; another failure breaks the streak.
    func testInProgressStreakAsksForOnePowerCyclePerEpisode() async throws {
        let scheduler = scheduler(AdapterScheduler.Limits(failedAttemptsPerMinute: 100, inProgressLimit: 3))
        func fail(_ code: BLETransportError.Code) async throws -> AdapterScheduler.Verdict {
            scheduler.failed(try await scheduler.beginAttempt(), code: code)
        }
        var verdicts: [AdapterScheduler.Verdict] = []
        for code: BLETransportError.Code in [.inProgress, .inProgress, .connectFailed, .inProgress, .inProgress, .inProgress] {
            verdicts.append(try await fail(code))
        }
        XCTAssertEqual(verdicts.last, .powerCycle(reason: "3 InProgress answers in a row"))
        XCTAssertEqual(verdicts.dropLast().filter { $0 != .healthy }.count, 0, "\(verdicts)")
        var more: [AdapterScheduler.Verdict] = []
        for _ in 1...3 { more.append(try await fail(.inProgress)) }
        XCTAssertEqual(more, [.healthy, .healthy, .healthy], "not re-armed before a device is seen")
        scheduler.sawAdvertisement()
        var rearmed: [AdapterScheduler.Verdict] = []
        for _ in 1...3 { rearmed.append(try await fail(.inProgress)) }
        XCTAssertEqual(rearmed, [.healthy, .healthy, .powerCycle(reason: "3 InProgress answers in a row")])
        XCTAssertEqual(scheduler.snapshot.powerCycles, 2)
    }

    /// Silence is measured on the monotonic clock: a step of the wall clock an hour forward (NTP
    /// synchronising a box that booted behind) is no silence, and one back hides none.
    func testAStepOfTheWallClockNeitherFakesASilenceNorHidesOne() {
        let clock = ManualClock()
        let scheduler = scheduler(AdapterScheduler.Limits(silentSeconds: 30), clock: clock)
        clock.step(by: 3600)
        XCTAssertEqual(scheduler.checkSilence(), .healthy, "an hour forward on the wall clock, no time passed")
        clock.step(by: -7200)
        clock.advance(by: .seconds(30))
        XCTAssertEqual(scheduler.checkSilence(), .powerCycle(reason: "discovery saw no device for 30 s"))
    }

    /// Discovery that sees nothing for `silentSeconds` asks for one power cycle, re-armed when a
    /// device is seen.
    func testSilenceAsksForOnePowerCycleUntilADeviceIsSeen() {
        let clock = ManualClock()
        let scheduler = scheduler(AdapterScheduler.Limits(silentSeconds: 30), clock: clock)
        clock.advance(by: .seconds(29))
        XCTAssertEqual(scheduler.checkSilence(), .healthy)
        clock.advance(by: .seconds(1))
        XCTAssertEqual(scheduler.checkSilence(), .powerCycle(reason: "discovery saw no device for 30 s"))
        clock.advance(by: .seconds(60))
        XCTAssertEqual(scheduler.checkSilence(), .healthy)
        scheduler.sawAdvertisement()
        clock.advance(by: .seconds(20))
        XCTAssertEqual(scheduler.checkSilence(), .healthy)
        clock.advance(by: .seconds(10))
        XCTAssertEqual(scheduler.checkSilence(), .powerCycle(reason: "discovery saw no device for 30 s"))
    }

    /// Connected devices stop advertising: while a link is up the adapter is not silent, and the
    /// silence counts from the last link's end.
    func testAnAdapterHoldingALinkIsNotSilent() async throws {
        let clock = ManualClock()
        let scheduler = scheduler(AdapterScheduler.Limits(silentSeconds: 30), clock: clock)
        let attempt = try await scheduler.beginAttempt()
        scheduler.connected(attempt)
        clock.advance(by: .seconds(600))
        XCTAssertEqual(scheduler.checkSilence(), .healthy)
        clock.advance(by: .seconds(20))
        scheduler.released()
        clock.advance(by: .seconds(29))
        XCTAssertEqual(scheduler.checkSilence(), .healthy)
        clock.advance(by: .seconds(1))
        XCTAssertEqual(scheduler.checkSilence(), .powerCycle(reason: "discovery saw no device for 30 s"))
    }

    func testLimitsDecodeStrictlyAndAreRangeChecked() throws {
        let limits = try ConfigurationDecoder.decode(
            AdapterScheduler.Limits.self, from: .object(["connections": .number(7), "silentSeconds": .number(120)]))
        XCTAssertEqual(limits, AdapterScheduler.Limits(connections: 7, silentSeconds: 120))
        XCTAssertThrowsError(try AdapterScheduler.Limits(connections: 0).validate()) { error in
            XCTAssertTrue("\(error)".contains("adapterLimits.connections"), "\(error)")
        }
        XCTAssertThrowsError(try AdapterScheduler.Limits(silentSeconds: 5).validate())
        XCTAssertThrowsError(try ConfigurationDecoder.decode(AdapterScheduler.Limits.self, from: .object(["slots": .number(3)])))
    }

    /// The gateway's adapters: one scheduler per adapter name, the same for every source that
    /// asks, each with the gateway's limits (no source sets them for another).
    func testTheGatewaysAdaptersShareOneSchedulerPerAdapterWithTheGatewaysLimits() {
        let limits = AdapterScheduler.Limits(connections: 2, failedAttemptsPerMinute: 10)
        let adapters = BluetoothAdapters(limits: limits, clock: ManualClock())
        let first = adapters.scheduler(for: "hci0")
        XCTAssertTrue(first === adapters.scheduler(for: "hci0"))
        XCTAssertFalse(first === adapters.scheduler(for: "hci1"))
        XCTAssertTrue(adapters.scheduler(for: nil) === adapters.scheduler(for: nil))
        XCTAssertEqual(first.limits, limits)
        XCTAssertEqual(adapters.scheduler(for: "hci1").limits, limits)
        // Slots are counted per adapter, over every source that holds one.
        XCTAssertTrue(adapters.scheduler(for: "hci0").claimSlot())
        XCTAssertTrue(adapters.scheduler(for: "hci0").claimSlot())
        XCTAssertFalse(adapters.scheduler(for: "hci0").claimSlot())
        XCTAssertTrue(adapters.scheduler(for: "hci1").claimSlot())
    }
}

/// The order attempts started in, shared with the waiting tasks.
private final class StartOrder: Sendable {
    let names = Mutex<[String]>([])
}

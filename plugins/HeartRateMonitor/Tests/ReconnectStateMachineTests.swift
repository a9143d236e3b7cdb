import BLEProfileKit
import BLETransport
import HeartRateMonitor
import XCTest

final class ReconnectStateMachineTests: XCTestCase {
    let policy = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(30), multiplier: 2)

    func testBackoffDoublesUpToTheMaximumAndNeverGivesUp() {
        var machine = ReconnectStateMachine(policy: policy)
        XCTAssertEqual(machine.start(), .connect)
        var delays: [Duration] = []
        for attempt in 1...10 {
            let code: BLETransportError.Code = attempt.isMultiple(of: 2) ? .inProgress : .connectFailed
            guard case .sleep(let delay) = machine.connectFailed(code, devicePresent: true) else {
                return XCTFail("attempt \(attempt) did not back off")
            }
            delays.append(delay)
            XCTAssertEqual(machine.delayElapsed(devicePresent: true), .connect)
        }
        XCTAssertEqual(delays.prefix(6), [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30)])
        XCTAssertEqual(delays.last, .seconds(30))
        XCTAssertEqual(machine.failedAttempts, 10)
        machine.connected()
        XCTAssertEqual(machine.state, .connected)
        XCTAssertEqual(machine.failedAttempts, 10, "not healthy until data arrives")
        machine.receivedData()
        XCTAssertEqual(machine.failedAttempts, 0)
    }

    func testLinkLossBacksOffReconnectsAndCountsTheGap() {
        var machine = ReconnectStateMachine(policy: policy)
        _ = machine.start()
        machine.connected()
        machine.receivedData()
        XCTAssertEqual(machine.linkLost(devicePresent: true), .sleep(.seconds(1)))
        XCTAssertEqual(machine.gaps, 1)
        XCTAssertEqual(machine.state, .backingOff(.seconds(1)))
        XCTAssertEqual(machine.delayElapsed(devicePresent: true), .connect)
        // The first attempt after a link loss fails: the backoff continues from there.
        XCTAssertEqual(machine.connectFailed(.connectFailed, devicePresent: true), .sleep(.seconds(2)))
        XCTAssertEqual(machine.delayElapsed(devicePresent: true), .connect)
        machine.connected()
        XCTAssertEqual(machine.connections, 2)
    }

    func testALinkThatDropsBeforeAnyDataKeepsBackingOff() {
        var machine = ReconnectStateMachine(policy: policy)
        _ = machine.start()
        var delays: [ReconnectStateMachine.Action] = []
        for _ in 1...4 {
            machine.connected()
            delays.append(machine.linkLost(devicePresent: true))
            XCTAssertEqual(machine.delayElapsed(devicePresent: true), .connect)
        }
        XCTAssertEqual(delays, [.sleep(.seconds(1)), .sleep(.seconds(2)), .sleep(.seconds(4)), .sleep(.seconds(8))])
        XCTAssertEqual(machine.gaps, 4)
    }

    func testDeviceLostWaitsForRediscovery() {
        var machine = ReconnectStateMachine(policy: policy)
        _ = machine.start()
        machine.connected()
        // Discovery said the device object is gone before the link loss was noticed.
        XCTAssertEqual(machine.linkLost(devicePresent: false), .awaitRediscovery)
        XCTAssertEqual(machine.state, .awaitingRediscovery)
        XCTAssertEqual(machine.rediscovered(), .connect)
        // The stack says the object is gone (org.bluez.Error.DoesNotExist → .notFound).
        XCTAssertEqual(machine.connectFailed(.notFound, devicePresent: true), .awaitRediscovery)
        XCTAssertEqual(machine.rediscovered(), .connect)
        // Lost during a backoff: the sleep ends in waiting, not in a doomed attempt.
        XCTAssertEqual(machine.connectFailed(.connectFailed, devicePresent: true), .sleep(.seconds(4)))
        XCTAssertEqual(machine.delayElapsed(devicePresent: false), .awaitRediscovery)
    }

    func testUnavailableIsLoggedOncePerOutage() {
        var machine = ReconnectStateMachine(policy: policy)
        _ = machine.start()
        XCTAssertTrue(machine.shouldLogUnavailable())
        XCTAssertEqual(machine.connectFailed(.unavailable, devicePresent: true), .sleep(.seconds(1)))
        XCTAssertFalse(machine.shouldLogUnavailable())
        XCTAssertEqual(machine.connectFailed(.unavailable, devicePresent: true), .sleep(.seconds(2)))
        XCTAssertFalse(machine.shouldLogUnavailable())
        machine.connected()
        XCTAssertTrue(machine.shouldLogUnavailable())
    }

    func testPolicyDelays() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(3), multiplier: 3)
        XCTAssertEqual(policy.delay(afterFailures: 1), .milliseconds(500))
        XCTAssertEqual(policy.delay(afterFailures: 2), .milliseconds(1500))
        XCTAssertEqual(policy.delay(afterFailures: 3), .seconds(3))
        XCTAssertEqual(policy.delay(afterFailures: 10_000), .seconds(3))
    }
}

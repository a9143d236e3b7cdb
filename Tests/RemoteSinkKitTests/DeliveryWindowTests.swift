import GatewayRuntime
import RemoteSinkKit
import XCTest

/// Each transition of the delivery window: an event in, the actions out (the exhaustive search
/// of their interleavings is DeliveryWindowModelCheckTests).
final class DeliveryWindowTests: XCTestCase {
    typealias Action = DeliveryWindow.Action
    let policy = DeliveryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8), jitter: 0)
    let unavailable = DeliveryOutcome.retry(reason: "HTTP 503", status: 503, retryAfter: nil)
    func retryAfter(_ seconds: Int64) -> DeliveryOutcome {
        .retry(reason: "HTTP 503", status: 503, retryAfter: .seconds(seconds))
    }
    func window(_ maxInFlight: Int = 4) -> DeliveryWindow {
        DeliveryWindow(committed: 0, maxInFlight: maxInFlight, policy: policy)
    }
    let t0 = Duration.seconds(100)

    struct Case {
        var name: String
        var run: (inout DeliveryWindow, Duration) -> [Action]
        var expected: [Action]
        var committed: Int64
        var check: (DeliveryWindow) -> Bool = { _ in true }
    }

    func testEachTransition() {
        let t0 = self.t0
        let unavailable = self.unavailable
        let cases: [Case] = [
            Case(
                name: "a batch begun is sent at once, whole",
                run: { window, now in window.begin(after: 0, through: 10, count: 4, now: now).actions },
                expected: [.send(slot: 0, part: 0..<4, attempt: 1)], committed: 0),
            Case(
                name: "an empty batch is done at once and commits",
                run: { window, now in window.begin(after: 0, through: 10, count: 0, now: now).actions },
                expected: [.commit(through: 10, records: 0)], committed: 10),
            Case(
                name: "an acknowledged batch commits the cursor through it",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    return window.answer(slot: 0, outcome: .delivered, now: now, random: 0.5)
                },
                expected: [.commit(through: 10, records: 4)], committed: 10),
            Case(
                name: "a batch acknowledged before an older one waits for it, then is passed with it",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    _ = window.begin(after: 10, through: 20, count: 2, now: now)
                    let early = window.answer(slot: 1, outcome: .delivered, now: now, random: 0.5)
                    XCTAssertEqual(window.acknowledgedAhead, [10])
                    return early + window.answer(slot: 0, outcome: .delivered, now: now, random: 0.5)
                },
                expected: [.commit(through: 20, records: 6)], committed: 20, check: { $0.acknowledgedAhead.isEmpty }),
            Case(
                name: "a failed batch waits its backoff, then is sent again as the same part",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    let failed = window.answer(slot: 0, outcome: unavailable, now: now, random: 0.5)
                    let early = window.advance(to: now + .milliseconds(999))
                    return failed + early + window.advance(to: now + .seconds(1))
                },
                expected: [
                    .retrying(slot: 0, count: 4, attempt: 1, delay: .seconds(1), reason: "HTTP 503", fromServer: false),
                    .send(slot: 0, part: 0..<4, attempt: 2),
                ],
                committed: 0),
            Case(
                name: "Retry-After pauses every batch: a new one waits, and both go at its end",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    let paused = window.answer(slot: 0, outcome: self.retryAfter(3), now: now, random: 0.5)
                    let begun = window.begin(after: 10, through: 20, count: 2, now: now + .seconds(1)).actions
                    return paused + begun + window.advance(to: now + .seconds(3))
                },
                expected: [
                    .retrying(slot: 0, count: 4, attempt: 1, delay: .seconds(3), reason: "HTTP 503", fromServer: true),
                    .pause(until: t0 + .seconds(3)),
                    .resume, .send(slot: 0, part: 0..<4, attempt: 2), .send(slot: 1, part: 0..<2, attempt: 1),
                ],
                committed: 0, check: { $0.pausedUntil == nil }),
            Case(
                name: "an answer in flight during a pause still counts",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    _ = window.begin(after: 10, through: 20, count: 2, now: now)
                    _ = window.answer(slot: 1, outcome: self.retryAfter(5), now: now, random: 0.5)
                    return window.answer(slot: 0, outcome: .delivered, now: now + .seconds(1), random: 0.5)
                },
                expected: [.commit(through: 10, records: 4)], committed: 10, check: { $0.isPaused(at: t0 + .seconds(4)) }),
            Case(
                name: "a refused batch is split in halves, the first sent first",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    return window.answer(slot: 0, outcome: .rejected(status: 400, answer: "no"), now: now, random: 0.5)
                },
                expected: [.splitting(slot: 0, count: 4, status: 400), .send(slot: 0, part: 0..<2, attempt: 1)], committed: 0),
            Case(
                name: "a change refused alone is dead-lettered; stored, the batch goes on and passes",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 2, now: now)
                    _ = window.answer(slot: 0, outcome: .rejected(status: 400, answer: "no"), now: now, random: 0.5)
                    let refused = window.answer(slot: 0, outcome: .rejected(status: 422, answer: "bad"), now: now, random: 0.5)
                    let stored = window.deadLettered(slot: 0, now: now)
                    return refused + stored + window.answer(slot: 0, outcome: .delivered, now: now, random: 0.5)
                },
                expected: [
                    .deadLetter(slot: 0, part: 0..<1, status: 422, answer: "bad"), .send(slot: 0, part: 1..<2, attempt: 1),
                    .commit(through: 10, records: 1),
                ],
                committed: 10),
            Case(
                name: "refused credentials keep the batch and back off",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    return window.answer(slot: 0, outcome: .authentication(status: 401), now: now, random: 0.5)
                },
                expected: [.reauthenticating(slot: 0, delay: .seconds(1), status: 401)], committed: 0,
                check: { $0.nextWake == t0 + .seconds(1) }),
            Case(
                name: "a stop gives up a waiting batch, halts, and leaves the cursor before it",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    _ = window.begin(after: 10, through: 20, count: 2, now: now)
                    _ = window.answer(slot: 0, outcome: unavailable, now: now, random: 0.5)
                    let stop = window.requestStop(now: now)
                    return stop + window.answer(slot: 1, outcome: .delivered, now: now, random: 0.5)
                },
                expected: [.abandoned(slot: 0, reason: "stopping")], committed: 0,
                check: { $0.isFinished && !$0.canBegin && $0.acknowledgedAhead == [10] }),
            Case(
                name: "a stop with nothing waiting goes on sending what the store holds",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    let stop = window.requestStop(now: now)
                    return stop + window.answer(slot: 0, outcome: .delivered, now: now, random: 0.5)
                },
                expected: [.commit(through: 10, records: 4)], committed: 10, check: { $0.canBegin && !$0.isFinished }),
            Case(
                name: "once stopping, a failed answer gives the batch up at once",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    _ = window.requestStop(now: now)
                    return window.answer(slot: 0, outcome: unavailable, now: now, random: 0.5)
                },
                expected: [.abandoned(slot: 0, reason: "HTTP 503")], committed: 0, check: { $0.isFinished }),
            Case(
                name: "once stopping, a Retry-After still pauses the receiver (the next start keeps it)",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    _ = window.requestStop(now: now)
                    return window.answer(slot: 0, outcome: self.retryAfter(3), now: now, random: 0.5)
                },
                expected: [.pause(until: t0 + .seconds(3)), .abandoned(slot: 0, reason: "HTTP 503")], committed: 0,
                check: { $0.isFinished && $0.pausedUntil == t0 + .seconds(3) }),
            Case(
                name: "a stop during the receiver's pause gives up what waits for it",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    _ = window.answer(slot: 0, outcome: self.retryAfter(3), now: now, random: 0.5)
                    return window.requestStop(now: now + .seconds(1))
                },
                expected: [.abandoned(slot: 0, reason: "stopping")], committed: 0, check: { $0.isFinished }),
            Case(
                name: "retention passes the batches it skips; their late answers are ignored",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    _ = window.begin(after: 10, through: 20, count: 2, now: now)
                    let skip = window.skip(through: 10, now: now)
                    let late = window.answer(slot: 0, outcome: .delivered, now: now, random: 0.5)
                    return skip + late + window.answer(slot: 1, outcome: .delivered, now: now, random: 0.5)
                },
                expected: [.commit(through: 20, records: 2)], committed: 20),
            Case(
                name: "dead letters sent again move no cursor",
                run: { window, now in
                    let begun = window.beginDeadLetterRetry(count: 3, now: now).actions
                    return begun + window.answer(slot: 0, outcome: .delivered, now: now, random: 0.5)
                },
                expected: [.send(slot: 0, part: 0..<3, attempt: 1)], committed: 0,
                check: { window in
                    var window = window
                    return window.finishDeadLetterRetry() == true && !window.isRetryingDeadLetters
                }),
            Case(
                name: "a full window begins nothing more",
                run: { window, now in
                    _ = window.begin(after: 0, through: 10, count: 4, now: now)
                    return []
                },
                expected: [], committed: 0, check: { !$0.canBegin }),
        ]
        for test in cases {
            var window = test.name == "a full window begins nothing more" ? self.window(1) : self.window()
            let actions = test.run(&window, t0)
            XCTAssertEqual(actions, test.expected, test.name)
            XCTAssertEqual(window.committed, test.committed, test.name)
            XCTAssertTrue(test.check(window), "\(test.name): its state check failed")
        }
    }

    func testAPauseRestoredFromTheStoreHoldsTheFirstSend() {
        var window = DeliveryWindow(committed: 5, maxInFlight: 2, policy: policy, pausedUntil: t0 + .seconds(2))
        XCTAssertEqual(window.begin(after: 5, through: 9, count: 1, now: t0).actions, [])
        XCTAssertEqual(window.nextWake, t0 + .seconds(2))
        XCTAssertEqual(window.advance(to: t0 + .seconds(2)), [.resume, .send(slot: 0, part: 0..<1, attempt: 1)])
    }
}

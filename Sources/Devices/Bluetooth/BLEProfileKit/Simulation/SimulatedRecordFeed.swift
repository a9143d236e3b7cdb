import AsyncPrimitives
public import BLETransport
public import FoundationEssentials
public import GatewayRuntime
import Synchronization

/// What a simulated device that keeps records (a glucose meter, a CGM sensor) sends once a
/// collector subscribes: first what its control points queued (the records a request asked for,
/// then the response), else each new record when the device takes it. Records are numbered (a
/// sequence number, a time offset); records taken before the subscription come only when asked
/// for. What a control point queues goes out at once, also while the feed waits for the next
/// record, as a device answers while it waits to take one. One feed per connection.
public final class SimulatedRecordFeed: Sendable {
    /// How a device's records are numbered and made.
    public struct Records: Sendable {
        /// From one record's number to the next.
        public var step: Int
        /// When the device takes record `number`; nil when it takes no such record (its memory
        /// is full, its session stopped): the feed then waits `idle` and asks again.
        public var takenAt: @Sendable (_ number: Int) -> Date?
        /// The notifications that carry record `number`, in order: one for most devices, its
        /// segments for a device that segments (a Generic Health Sensor). `asked` is true when a
        /// control point asked for the record (a stored record), false when it is sent live.
        public var notifications: @Sendable (_ number: Int, _ asked: Bool) -> [(BluetoothUUID, [UInt8])]
        /// How long to wait before asking again when no record is due.
        public var idle: Duration

        /// Records sent as one notification each on `characteristic`, live or asked for.
        public init(
            characteristic: BluetoothUUID, step: Int = 1, idle: Duration = .seconds(60),
            takenAt: @escaping @Sendable (Int) -> Date?, value: @escaping @Sendable (Int) -> [UInt8]
        ) {
            self.init(step: step, idle: idle, takenAt: takenAt) { number, _ in [(characteristic, value(number))] }
        }

        /// Records sent as the notifications `notifications` makes of each.
        public init(
            step: Int = 1, idle: Duration = .seconds(60), takenAt: @escaping @Sendable (Int) -> Date?,
            notifications: @escaping @Sendable (_ number: Int, _ asked: Bool) -> [(BluetoothUUID, [UInt8])]
        ) {
            self.step = step
            self.idle = idle
            self.takenAt = takenAt
            self.notifications = notifications
        }
    }

    private let records: Records
    /// Notifications due at once, and the number of the next record to send live.
    private let state: Mutex<(queue: [(BluetoothUUID, [UInt8])], next: Int)>
    /// How many times something was queued: a wait for a record ends when it moves.
    private let queued = AsyncCondition(0)

    /// A feed whose first live record is `first`.
    public init(_ records: Records, first: Int) {
        self.records = records
        state = Mutex(([], first))
    }

    /// Queues a control point's answer: the records `numbers` (in order), then `response` on
    /// `point`. Live records continue after the last one queued.
    public func answer(_ numbers: [Int], response: [UInt8], on point: BluetoothUUID) {
        let values = numbers.flatMap { records.notifications($0, true) }
        state.withLock { state in
            state.queue += values + [(point, response)]
            if let last = numbers.last { state.next = max(state.next, last + records.step) }
        }
        queued.update { $0 &+= 1 }
    }

    /// Queues one notification on `characteristic` (a control point's response).
    public func queue(_ value: [UInt8], on characteristic: BluetoothUUID) {
        state.withLock { $0.queue.append((characteristic, value)) }
        queued.update { $0 &+= 1 }
    }

    /// Sends live records from `number` on (a new session's first), or from where it was if later.
    public func live(from number: Int, restart: Bool = false) {
        state.withLock { $0.next = restart ? number : max($0.next, number) }
    }

    /// The notifications, until `link` closes; stamped on `clock`.
    public func notifications(link: SimulatedLink, clock: any GatewayClock) -> AsyncThrowingStream<BLENotification, any Error> {
        AsyncThrowingStream(unfolding: { [self] in
            while true {
                guard link.isOpen else { return nil }
                // Read before the queue is looked at: whatever is queued after it ends the wait.
                let seen = queued.value
                if let queued = state.withLock({ $0.queue.isEmpty ? nil : $0.queue.removeFirst() }) {
                    return BLENotification(characteristic: queued.0, value: queued.1, receivedAt: clock.now())
                }
                let number = state.withLock { $0.next }
                guard let due = records.takenAt(number) else {
                    _ = try await wait(until: nil, orFor: records.idle, on: clock, unlessQueuedAfter: seen)
                    continue
                }
                guard try await wait(until: due, orFor: records.idle, on: clock, unlessQueuedAfter: seen)
                else { continue }  // an answer first; the record is still due
                guard link.isOpen else { return nil }
                // A request answered during the wait already queued this record.
                let live = state.withLock { state -> Bool in
                    guard state.next == number else { return false }
                    state.next += records.step
                    return true
                }
                // Its notifications go through the queue, so that a record of several segments
                // is sent whole, in order.
                if live { state.withLock { $0.queue += records.notifications(number, false) } }
            }
        })
    }

    /// Sleeps on `clock` until `due` (nil: for `idle`); returns false early when something was
    /// queued since the count `seen`, true when the time passed. The time left is read as the
    /// sleep begins, in the race's task: a clock that moved between this call and that task's
    /// start (a test's manual clock advanced once it saw the feed about to sleep) is not slept
    /// through a second time.
    private func wait(until due: Date?, orFor idle: Duration, on clock: any GatewayClock, unlessQueuedAfter seen: Int) async throws -> Bool {
        let queued = queued
        let sleep: @Sendable () async throws -> Void = {
            try await clock.sleep(for: due.map { .seconds(max(0, $0.timeIntervalSince(clock.now()))) } ?? idle)
        }
        switch try await race(sleep: sleep, event: { try await queued.wait { $0 != seen } }) {
        case .timedOut: return true
        case .event: return false
        }
    }
}

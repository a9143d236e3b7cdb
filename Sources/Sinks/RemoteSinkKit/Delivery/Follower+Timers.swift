import AsyncPrimitives
import GatewayRuntime
import HealthStore
import SampleBus

extension Follower {
    /// Which of the driver's timers run: each is a child task of the driver's group that ends
    /// with an event.
    struct Timers {
        /// The waiter for commits after the read position.
        var waiting = false
        /// The poll tick (retention, dead-letter retries, the backlog in status).
        var ticking = false
        /// A partial batch's interval.
        var intervalRunning = false
        /// When the `.due` timer running ends, if one is.
        var wakeAt: Duration?
    }

    /// Starts the timers the window and the log need: the poll tick, the waiter for new commits
    /// (while the window has room), and the wake-up of the earliest waiting part.
    func schedule(
        _ timers: inout Timers, window: DeliveryWindow, reading: LogReading, group: inout ThrowingTaskGroup<Event, any Error>,
        context: FollowerContext
    ) {
        if !timers.ticking {
            timers.ticking = true
            let poll = Self.pollInterval
            group.addTask {
                _ = try await context.stopRequest.sleep(for: poll, on: context.clock)
                return .tick
            }
        }
        if !timers.waiting, window.canBegin {
            timers.waiting = true
            let after = reading.waitsAbove
            let poll = context.stopRequest.isRequested ? Self.stoppingPollInterval : Self.pollInterval
            group.addTask { [store] in
                // A stop request wakes it too: the follower then finishes what it can.
                try await store.waitForCommit(after: after) { _ = try await context.stopRequest.sleep(for: poll, on: context.clock) }
                return .woke
            }
        }
        if let due = window.nextWake, timers.wakeAt.map({ due < $0 }) ?? true {
            timers.wakeAt = due
            let delay = due - context.clock.uptime()
            group.addTask {
                if delay > .zero { try await context.clock.sleep(for: delay) }
                return .due
            }
        }
    }

    /// Starts a partial batch's interval, unless one runs.
    func startInterval(_ timers: inout Timers, group: inout ThrowingTaskGroup<Event, any Error>, context: FollowerContext) {
        guard !timers.intervalRunning else { return }
        timers.intervalRunning = true
        let interval = settings.batchInterval
        group.addTask {
            try await context.clock.sleep(for: interval)
            return .intervalDue
        }
    }
}

import FoundationEssentials
import GatewayRuntime
import HealthModel
import HealthStore
import SampleBus

// Carrying out what the window decided: sends, dead letters, cursor commits, the receiver's
// pause, and what each means for the log and the status.
extension Follower {
    /// Carries out the window's actions, and those that follow from them (a dead letter stored
    /// lets the batch go on).
    func carryOut(
        _ actions: [DeliveryWindow.Action], window: inout DeliveryWindow, reading: inout LogReading,
        group: inout ThrowingTaskGroup<Event, any Error>, context: FollowerContext
    ) async throws {
        var pending = actions[...]
        while let action = pending.popFirst() {
            let log = context.logger
            switch action {
            case .send(let slot, let part, _):
                guard let batch = reading.batches[slot] else { continue }
                let request = batch.part(part)
                group.addTask { .answered(slot: slot, await receiver.send(request, context: context)) }
            case .deadLetter(let slot, let part, let status, let answer):
                if let batch = reading.batches[slot] {
                    try await deadLetter(Array(batch.changes[part]), status: status, answer: answer, context: context)
                }
                pending += window.deadLettered(slot: slot, now: context.clock.uptime())
            case .commit(let through, let records):
                try await store.acknowledge(follower: name, through: through)
                reading.committed(through: through)
                if records > 0 { context.status.recordsHandled(records, lastDate: nil) }
                publish(cursor: through, context: context)
            case .pause(let until):
                let date = context.clock.now().addingTimeInterval((until - context.clock.uptime()).seconds)
                try await store.pause(follower: name, until: date)
                context.status.setDetail("pausedUntil", RFC3339.string(from: date))
                log.notice("\(receiver.destination) asked for a pause (Retry-After): nothing is sent to it before \(RFC3339.string(from: date))")
            case .resume:
                context.status.setDetail("pausedUntil", nil)
            case .retrying(_, let count, let attempt, let delay, let reason, let fromServer):
                log.warning(
                    "sending \(String(count: count, "change")) to \(receiver.destination) failed (\(reason)); "
                        + "retry \(attempt) in \(ConfigurationDecoder.format(delay.seconds)) s" + (fromServer ? " (Retry-After)" : ""))
                context.status.reportError(
                    "delivery failed: \(reason); retrying in \(ConfigurationDecoder.format(delay.seconds)) s", at: context.clock.now())
            case .reauthenticating(_, let delay, let status):
                let message = "authentication failed (\(status)) at \(receiver.destination); the changes wait in the store, "
                    + "retrying in \(ConfigurationDecoder.format(delay.seconds)) s"
                log.error(message)
                context.status.reportError(message, at: context.clock.now())
            case .splitting(_, let count, let status):
                log.warning(
                    "\(receiver.destination) refused a batch of \(count) with status \(status); splitting it to find the refused change")
            case .recovered(_, let attempts):
                log.info("\(receiver.destination) has the batch after \(attempts) attempts")
                context.status.clearError()
            case .abandoned(_, let reason):
                context.status.reportError("delivery failed: \(reason); stopping", at: context.clock.now())
            }
        }
        try await finishDeadLetterRetry(window: &window, reading: &reading, context: context)
    }

    /// The follower's status details: its cursor and what it has left to send.
    func publish(cursor: Int64, context: FollowerContext) {
        context.status.setDetail("cursor", String(cursor))
        context.status.setDetail("destination", receiver.destination)
    }
}

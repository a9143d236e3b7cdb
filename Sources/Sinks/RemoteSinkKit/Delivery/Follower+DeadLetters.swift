import FoundationEssentials
import GatewayRuntime
import HealthModel
import HealthStore
import SampleBus

// Dead letters: changes the receiver refused one by one, stored and passed over, and sent again
// when the operator marks them (`healthgate dead-letters retry`).
extension Follower {
    /// Stores `changes` (one, refused alone) as dead letters and reports it.
    func deadLetter(_ changes: [FollowedChange], status: Int, answer: String, context: FollowerContext) async throws {
        let now = context.clock.now()
        let encoder = HealthJSON.makeEncoder()
        let letters = changes.map { change in
            var payload: [UInt8]?
            if case .stored(let record, _) = change { payload = try? HealthJSONPayload.encode(record, encoder: encoder) }
            return DeadLetter(
                follower: name, id: change.id, kind: change.kind, type: change.typeIdentifier, isDeletion: change.isDeletion,
                anchor: change.anchor, payload: payload, status: status, response: answer, failedAt: now)
        }
        try await store.addDeadLetters(letters)
        let what = changes.map { "\($0.isDeletion ? "the deletion of " : "")\($0.id)" }.joined(separator: ", ")
        context.logger.error(
            "\(receiver.destination) refused \(what) with status \(status): \(answer.prefix(200)); kept as a dead letter",
            device: changes.first.flatMap { change in
                if case .stored(let record, _) = change { return record.device?.displayName }
                return nil
            })
        context.status.reportError("\(what) refused with status \(status); see 'healthgate dead-letters list'", at: now)
        context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))
    }

    /// Begins sending the dead letters marked for retry, as a batch of the window apart from the
    /// cursor; once the receiver has them (or refused some again, stored anew) their rows are
    /// removed (``finishDeadLetterRetry(window:reading:context:)``).
    func retryDeadLetters(window: inout DeliveryWindow, reading: inout LogReading, context: FollowerContext) async throws
        -> [DeliveryWindow.Action]
    {
        let letters = try await store.deadLetters(follower: name, retryOnly: true)
        guard !letters.isEmpty else { return [] }
        let decoder = HealthJSON.makeDecoder()
        var changes: [FollowedChange] = []
        var rows: [Int64] = []
        // Each object as the store holds it now: a letter (one for each object and follower) holds the
        // version refused, and the object may have changed since (a series grew, a record was
        // replaced) with a later version delivered already; the letter's own version sent after
        // it would leave the receiver a version behind the store. The letter itself (a deletion,
        // say) when the store holds nothing of the object later.
        let stored = try await storedNow(letters.map(\.id))
        for letter in letters {
            if let now = stored[letter.id], !letter.isDeletion || now.anchor > letter.anchor {
                changes.append(now)
            } else if letter.isDeletion {
                changes.append(.deleted(StoreChanges.Deletion(id: letter.id, kind: letter.kind, type: letter.type, anchor: letter.anchor)))
            } else if let payload = letter.payload, let record = try? HealthJSONPayload.decode(payload, kind: letter.kind, decoder: decoder) {
                changes.append(.stored(record, anchor: letter.anchor))
            } else {
                context.logger.error("the dead letter \(letter.id) cannot be read back; it stays")
                continue
            }
            rows.append(letter.rowID)
        }
        guard !changes.isEmpty else { return [] }
        context.logger.info("sending \(String(count: changes.count, "dead letter")) again, as asked")
        let (slot, actions) = window.beginDeadLetterRetry(count: changes.count, now: context.clock.uptime())
        reading.batches[slot] = batch(after: 0, through: 0, changes: changes)
        reading.deadLetterRows = rows
        return actions
    }

    /// The objects of `ids` the store holds, each as the change at its current anchor.
    func storedNow(_ ids: [SampleID]) async throws -> [SampleID: FollowedChange] {
        let wanted = Set(ids)
        var found: [SampleID: FollowedChange] = [:]
        for anchor in try await store.anchors(of: ids) {
            let page = try await store.changes(since: anchor - 1, limit: 1, includingCorrelationMembers: false)
            for change in FollowedChange.changes(of: page) where change.anchor == anchor && wanted.contains(change.id) {
                found[change.id] = change
            }
        }
        return found
    }

    /// Once the window is done with a dead-letter retry: removes the letters the receiver has
    /// (those it refused again were stored anew).
    func finishDeadLetterRetry(window: inout DeliveryWindow, reading: inout LogReading, context: FollowerContext) async throws {
        guard let delivered = window.finishDeadLetterRetry() else { return }
        if delivered {
            try await store.removeDeadLetters(reading.deadLetterRows)
            context.status.setDetail("deadLetters", String(try await store.deadLetters(follower: name).count))
        }
        reading.deadLetterRows = []
    }
}

import AsyncPrimitives
public import FoundationEssentials
public import HealthModel
import SQLite

/// Where a new follower starts reading the change log.
public enum FollowerStart: String, Sendable, Hashable, CaseIterable, Decodable {
    /// At anchor 0: every change the store holds is sent.
    case beginning
    /// At the store's latest anchor: only what is stored from now on.
    case now
}

/// A follower's cursor, committed in the store: the receiver acknowledged every change through
/// ``anchor``.
public struct FollowerCursor: Sendable, Hashable {
    /// The follower's name: the remote sink's instance name.
    public var name: String
    /// The anchor through which the receiver acknowledged the log.
    public var anchor: Int64
    /// Changes skipped so far: retention bounds exceeded, or a log that no longer held them.
    public var skipped: Int64
    /// When the cursor last moved.
    public var updatedAt: Date
    /// The receiver asked for nothing to be sent before this time (its Retry-After); nil when it
    /// did not, or the time passed before the pause ended.
    public var pausedUntil: Date?
}

/// A batch a follower began sending and whose changes its cursor has not passed yet.
public struct BegunBatch: Sendable, Hashable {
    /// The batch's range of the log: (`after`, `through`].
    public var after: Int64
    public var through: Int64
    /// The key it was last sent under (a follower derives the key from what the batch carries,
    /// so a rebuilt batch that lost a change is sent under another); nil for a batch begun by a
    /// version that kept none.
    public var key: String?
    /// Whether the receiver acknowledged it (the follower stopped with an older batch unanswered).
    public var acknowledged: Bool

    public init(after: Int64, through: Int64, key: String?, acknowledged: Bool) {
        self.after = after
        self.through = through
        self.key = key
        self.acknowledged = acknowledged
    }
}

/// The store's log and followers at one moment: what `status` and `/metrics` say of it
/// (``HealthStore/overview()``).
public struct StoreOverview: Sendable {
    /// One remote sink's follower.
    public struct Follower: Sendable {
        public var cursor: FollowerCursor
        public var backlog: FollowerBacklog
        public var deadLetters: Int
    }

    public var latestAnchor: Int64
    public var followers: [Follower]
    /// The store's background migration, a step each.
    public var migrationSteps: [StoreMigrationStep]
}

/// What a follower has not been sent yet, from the store's commit records.
public struct FollowerBacklog: Sendable, Hashable {
    /// Anchors handed out after the cursor (objects stored and deleted, including any replaced
    /// since, so an upper bound on the changes to send).
    public var anchors: Int64
    /// The estimated bytes those changes take in the store.
    public var bytes: Int
    /// When the oldest of them was committed; nil when none is pending or its commit predates
    /// the follower.
    public var oldest: Date?
}

/// A change a receiver refused one by one: the record (or deletion), the answer, and whether
/// the operator asked for it to be sent again.
public struct DeadLetter: Sendable, Hashable {
    /// The row's id in the store (0 for a letter not stored yet).
    public var rowID: Int64
    /// The follower (remote sink) that was refused.
    public var follower: String
    public var id: SampleID
    public var kind: HealthRecordKind
    /// The type's identifier (as ``ChangeType/identifier``).
    public var type: String
    /// Whether the refused change was a deletion.
    public var isDeletion: Bool
    /// The change's anchor when it was refused.
    public var anchor: Int64
    /// The record's HealthJSON (nil for a deletion), so that a retry can send it after the
    /// store pruned it.
    public var payload: [UInt8]?
    /// The receiver's status (an HTTP status; 0 when the receiver has none).
    public var status: Int
    /// The receiver's answer, at most 4 KiB.
    public var response: String
    public var failedAt: Date
    /// Whether `healthgate dead-letters retry` asked for it to be sent again.
    public var retry: Bool

    public init(
        rowID: Int64 = 0, follower: String, id: SampleID, kind: HealthRecordKind, type: String, isDeletion: Bool,
        anchor: Int64, payload: [UInt8]?, status: Int, response: String, failedAt: Date, retry: Bool = false
    ) {
        self.rowID = rowID
        self.follower = follower
        self.id = id
        self.kind = kind
        self.type = type
        self.isDeletion = isDeletion
        self.anchor = anchor
        self.payload = payload
        self.status = status
        self.response = String(response.prefix(4096))
        self.failedAt = failedAt
        self.retry = retry
    }
}

extension HealthStore {
    // MARK: Followers (remote sinks reading the change log)

    /// The follower `name` (a remote sink's instance name), registered at `start` when the store
    /// does not know it yet. Registered followers hold the log: tombstones (and, under
    /// ``LogRetention/untilAcknowledged``, records) stay until every follower acknowledged them.
    public func registerFollower(_ name: String, startingAt start: FollowerStart) async throws(StoreError) -> FollowerCursor {
        try await requireWriter().perform { writer throws(StoreError) in try writer.registerFollower(name, startingAt: start) }
    }

    /// Forgets the followers not in `names`, so that a remote sink removed from the
    /// configuration no longer holds the log. Returns the names forgotten.
    @discardableResult
    public func removeFollowers(keeping names: [String]) async throws(StoreError) -> [String] {
        try await requireWriter().perform { writer throws(StoreError) in try writer.removeFollowers(keeping: names) }
    }

    /// Commits follower `name`'s cursor at `anchor` (it never moves back): the receiver has
    /// every change through it.
    public func acknowledge(follower name: String, through anchor: Int64) async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in try writer.acknowledge(follower: name, through: anchor) }
    }

    /// Moves follower `name`'s cursor to `anchor` past `count` changes it will not be sent.
    public func skip(follower name: String, to anchor: Int64, count: Int64) async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in try writer.skip(follower: name, to: anchor, count: count) }
    }

    /// Commits that follower `name` is about to send the changes in (`after`, `through`] under
    /// `key`, so that after a stop or a crash it sends the same range again
    /// (``followerBatches(_:)``); committed again when the range is sent under another key.
    public func beginBatch(follower name: String, after: Int64, through: Int64, key: String) async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in
            try writer.beginBatch(follower: name, after: after, through: through, key: key)
        }
    }

    /// Commits that follower `name`'s receiver acknowledged the batches starting after each of
    /// `anchors` while its cursor cannot pass them yet: a restart does not send them again.
    public func rememberBatches(follower name: String, after anchors: [Int64]) async throws(StoreError) {
        guard !anchors.isEmpty else { return }
        try await requireWriter().perform { writer throws(StoreError) in try writer.rememberBatches(follower: name, after: anchors) }
    }

    /// Commits the time before which follower `name` sends nothing (its receiver's Retry-After),
    /// or clears it with nil.
    public func pause(follower name: String, until date: Date?) async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in try writer.pause(follower: name, until: date) }
    }

    /// The batches follower `name` began sending beyond its cursor, oldest first.
    public func followerBatches(_ name: String) async throws(StoreError) -> [BegunBatch] {
        let path = self.path
        return try await shortRead(oneStatement: true) { connection throws(StoreError) in
            try Self.run(
                connection,
                "SELECT after, through, batch_key, acknowledged FROM follower_batches WHERE follower = ?1 ORDER BY after",
                [.text(name)], path: path
            ).compactMap { row in
                guard let after = row.integer(0), let through = row.integer(1) else { return nil }
                return BegunBatch(after: after, through: through, key: row.text(2), acknowledged: row.integer(3) == 1)
            }
        }
    }

    /// The anchors of the objects with `ids` that the store holds (any kind). Quantity samples
    /// have no index on their uuid alone, so this reads the samples table once: for an import,
    /// not for a hot path.
    public func anchors(of ids: [SampleID]) async throws(StoreError) -> [Int64] {
        guard !ids.isEmpty else { return [] }
        let path = self.path
        return try await read { connection throws(StoreError) in
            let wanted = Set(ids)
            var anchors: [Int64] = []
            for table in ["samples", "quantity_series", "correlations", "heartbeat_series", "workouts"] {
                for row in try Self.run(connection, "SELECT anchor, uuid FROM \(table)", [], path: path) {
                    if let anchor = row.integer(0), let id = row.blob(1).flatMap(SampleID.init(bytes:)), wanted.contains(id) {
                        anchors.append(anchor)
                    }
                }
            }
            return anchors
        }
    }

    /// The latest anchor handed out and the greatest anchor whose tombstone was purged (a
    /// follower below it may have missed deletions).
    public func logBounds() async throws(StoreError) -> (latest: Int64, purgedThrough: Int64) {
        let path = self.path
        return try await shortRead(oneStatement: true) { connection throws(StoreError) in
            let row = try Self.run(connection, "SELECT latest, purged_through FROM anchors", [], path: path).first
            return (row?.integer(0) ?? 0, row?.integer(1) ?? 0)
        }
    }

    /// The follower `name`, or nil when it is not registered.
    public func follower(_ name: String) async throws(StoreError) -> FollowerCursor? {
        let path = self.path
        return try await shortRead(oneStatement: true) { connection throws(StoreError) in
            do {
                return try RecordWriter.follower(name, connection)
            } catch {
                throw StoreError.wrap(error, path: path)
            }
        }
    }

    /// Every registered follower, by name.
    public func followers() async throws(StoreError) -> [FollowerCursor] {
        let path = self.path
        return try await read { connection throws(StoreError) in try Self.followers(connection, path: path) }
    }

    static func followers(_ connection: SQLiteConnection, path: String) throws(StoreError) -> [FollowerCursor] {
        try run(
            connection, "SELECT name, anchor, skipped, updated_us, paused_until_us FROM followers ORDER BY name", [], path: path
        ).compactMap { row in
            guard let name = row.text(0), let anchor = row.integer(1) else { return nil }
            return FollowerCursor(
                name: name, anchor: anchor, skipped: row.integer(2) ?? 0,
                updatedAt: StoreTime.date(microseconds: row.integer(3) ?? 0),
                pausedUntil: row.integer(4).map { StoreTime.date(microseconds: $0) })
        }
    }

    /// What a follower at `anchor` has not been sent.
    public func backlog(after anchor: Int64) async throws(StoreError) -> FollowerBacklog {
        let path = self.path
        return try await shortRead { connection throws(StoreError) in try Self.backlog(after: anchor, connection, path: path) }
    }

    static func backlog(after anchor: Int64, _ connection: SQLiteConnection, path: String) throws(StoreError) -> FollowerBacklog {
        let latest = try latestAnchor(connection, path: path)
        let row = try run(
            connection, "SELECT ifnull(sum(bytes), 0), min(committed_us) FROM log_commits WHERE last_anchor > ?1",
            [.integer(anchor)], path: path
        ).first
        return FollowerBacklog(
            anchors: max(0, latest - anchor), bytes: Int(row?.integer(0) ?? 0),
            oldest: row?.integer(1).map { StoreTime.date(microseconds: $0) })
    }

    static func latestAnchor(_ connection: SQLiteConnection, path: String) throws(StoreError) -> Int64 {
        try run(connection, "SELECT latest FROM anchors", [], path: path).first?.integer(0) ?? 0
    }

    /// What `status` and `/metrics` say of the store (``StoreOverview``), read in one transaction
    /// on a reader of the pool: never on the caller's thread, so a caller on the cooperative pool
    /// only waits, whatever the disk does.
    public func overview() async throws(StoreError) -> StoreOverview {
        let path = self.path
        return try await read { connection throws(StoreError) in
            let followers = try Self.followers(connection, path: path).map { cursor throws(StoreError) in
                StoreOverview.Follower(
                    cursor: cursor, backlog: try Self.backlog(after: cursor.anchor, connection, path: path),
                    deadLetters: Int(try Self.run(
                        connection, "SELECT count(*) FROM dead_letters WHERE follower = ?1", [.text(cursor.name)], path: path
                    ).first?.integer(0) ?? 0))
            }
            do {
                return StoreOverview(
                    latestAnchor: try Self.latestAnchor(connection, path: path), followers: followers,
                    migrationSteps: try StoreMigrationStep.all(in: connection))
            } catch {
                throw StoreError.wrap(error, path: path)
            }
        }
    }

    /// Where a follower at `anchor` must skip to so that what it has left to send is within
    /// `maxBytes` and no older than `maxAgeSeconds`, and how many changes it skips; nil when it
    /// is within both. Ages are measured on the clock that dated the commits (the writer's).
    /// Skips whole transactions: the first kept is the oldest commit from which on both bounds hold.
    public func retentionSkip(
        after anchor: Int64, maxBytes: Int, maxAgeSeconds: Double
    ) async throws(StoreError) -> (anchor: Int64, count: Int64)? {
        let path = self.path
        let cutoff = StoreTime.microseconds(now().addingTimeInterval(-maxAgeSeconds))
        return try await read { connection throws(StoreError) in
            let bounds: [SQLiteValue] = [.integer(anchor), .integer(Int64(maxBytes)), .integer(cutoff)]
            let pending = try Self.run(
                connection,
                "SELECT ifnull(sum(bytes), 0) <= ?2 AND ifnull(min(committed_us), ?3) >= ?3 FROM log_commits WHERE last_anchor > ?1",
                bounds, path: path)
            if pending.first?.integer(0) == 1 { return nil }
            // The first commit (oldest first) from which on both bounds hold; everything before
            // it is skipped. No such commit: everything is.
            let kept = try Self.run(
                connection,
                """
                SELECT min(last_anchor) FROM (
                    SELECT last_anchor, committed_us, sum(bytes) OVER (ORDER BY last_anchor DESC) AS remaining
                    FROM log_commits WHERE last_anchor > ?1)
                WHERE remaining <= ?2 AND committed_us >= ?3
                """, bounds, path: path
            ).first?.integer(0)
            let target: Int64
            if let kept {
                target = try Self.run(
                    connection, "SELECT ifnull(max(last_anchor), ?1) FROM log_commits WHERE last_anchor > ?1 AND last_anchor < ?2",
                    [.integer(anchor), .integer(kept)], path: path
                ).first?.integer(0) ?? anchor
            } else {
                target = try Self.run(connection, "SELECT latest FROM anchors", [], path: path).first?.integer(0) ?? anchor
            }
            guard target > anchor else { return nil }
            return (target, try Self.countChanges(connection, after: anchor, through: target, path: path))
        }
    }

    /// The objects and tombstones whose anchors lie in (`anchor`, `through`].
    static func countChanges(
        _ connection: SQLiteConnection, after anchor: Int64, through: Int64, path: String
    ) throws(StoreError) -> Int64 {
        let tables = ["samples", "correlations", "heartbeat_series", "workouts", "tombstones"]
        let sql = "SELECT " + tables.map { "(SELECT count(*) FROM \($0) WHERE anchor > ?1 AND anchor <= ?2)" }
            .joined(separator: " + ")
        return try run(connection, sql, [.integer(anchor), .integer(through)], path: path).first?.integer(0) ?? 0
    }

    /// Returns once the store committed a change above `anchor` in this process, or when
    /// `sleep` returns (a timeout on the caller's clock), whichever comes first: a follower then
    /// reads ``latestAnchor()``, which also sees another process's commits (`healthgate delete`).
    /// - Throws: `CancellationError`, or what `sleep` throws.
    public func waitForCommit(after anchor: Int64, orUntil sleep: @escaping @Sendable () async throws -> Void) async throws {
        let committed = self.committed
        if committed.value > anchor { return }
        _ = try await race(sleep: sleep) { try await committed.wait { $0 > anchor } }
    }

    /// Sets what the store keeps once every follower acknowledged it (the executable sets
    /// ``LogRetention/untilAcknowledged`` when only remote sinks are configured).
    public func setRetention(_ retention: LogRetention) async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in writer.retention = retention }
    }

    // MARK: Dead letters

    /// Stores dead letters; one for the same follower and uuid replaces the earlier one.
    public func addDeadLetters(_ letters: [DeadLetter]) async throws(StoreError) {
        guard !letters.isEmpty else { return }
        try await requireWriter().perform { writer throws(StoreError) in try writer.addDeadLetters(letters) }
    }

    /// The dead letters of `follower` (every follower when nil), oldest first; only those
    /// marked for retry when `retryOnly`.
    public func deadLetters(follower: String? = nil, retryOnly: Bool = false) async throws(StoreError) -> [DeadLetter] {
        let path = self.path
        return try await read { connection throws(StoreError) in
            let rows = try Self.run(
                connection,
                """
                SELECT id, follower, uuid, kind, type, deleted, anchor, payload, status, response, failed_us, retry
                FROM dead_letters WHERE (?1 IS NULL OR follower = ?1) AND (?2 = 0 OR retry = 1) ORDER BY id
                """, [follower.map { .text($0) } ?? .null, .integer(retryOnly ? 1 : 0)], path: path)
            return try rows.map { row throws(StoreError) -> DeadLetter in
                guard let rowID = row.integer(0), let name = row.text(1), let bytes = row.blob(2),
                    let id = SampleID(bytes: bytes), let kind = row.text(3).flatMap(HealthRecordKind.init(rawValue:)),
                    let type = row.text(4)
                else {
                    throw StoreError(.invalidData, path: path, message: "dead letter \(row.integer(0) ?? 0) is malformed")
                }
                return DeadLetter(
                    rowID: rowID, follower: name, id: id, kind: kind, type: type, isDeletion: row.integer(5) == 1,
                    anchor: row.integer(6) ?? 0, payload: row.blob(7), status: Int(row.integer(8) ?? 0),
                    response: row.text(9) ?? "", failedAt: StoreTime.date(microseconds: row.integer(10) ?? 0),
                    retry: row.integer(11) == 1)
            }
        }
    }

    /// Marks dead letters for their follower to send again: those of `ids` (all when nil), of
    /// `follower` (every follower when nil). Returns how many were marked.
    @discardableResult
    public func retryDeadLetters(follower: String? = nil, ids: [SampleID]? = nil) async throws(StoreError) -> Int {
        try await requireWriter().perform { writer throws(StoreError) in
            try writer.markDeadLettersForRetry(follower: follower, ids: ids)
        }
    }

    /// Removes dead letters by ``DeadLetter/rowID``. Returns how many went.
    @discardableResult
    public func removeDeadLetters(_ rowIDs: [Int64]) async throws(StoreError) -> Int {
        guard !rowIDs.isEmpty else { return 0 }
        return try await requireWriter().perform { writer throws(StoreError) in try writer.removeDeadLetters(rowIDs) }
    }
}

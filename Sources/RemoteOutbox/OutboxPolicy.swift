/// What a full outbox does (config key `outbox.policy`).
public enum OutboxPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Stop taking records from the inbox until deliveries make room, so back-pressure reaches
    /// the bus. Nothing is dropped.
    case block
    /// Drop the oldest pending records to make room; counted, logged as a warning, and shown in
    /// status.
    case dropOldest
}

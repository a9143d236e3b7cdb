public import Foundation
public import HealthModel

/// A record a remote sink gave up on, kept with the answer: refused by the repository (for HTTP a
/// 4xx other than 401, 403, 408 and 429) or impossible to encode in the sink's format (status 0).
public struct DeadLetter: Sendable, Hashable, Codable {
    public var id: SampleID
    public var kind: HealthRecordKind
    /// The record's sample in HealthJSON, as text.
    public var payload: String
    public var enqueuedAt: Date
    public var failedAt: Date
    /// The status of the refusal (the HTTP status for the HTTP sink); 0 when the record cannot be
    /// encoded.
    public var status: Int
    /// The start of the server's answer (at most 4 KiB).
    public var response: String

    enum CodingKeys: String, CodingKey { case id = "uuid", kind, payload, enqueuedAt, failedAt, status, response }
}

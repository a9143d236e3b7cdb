/// An advertisement payload that does not decode: which payload, what went wrong, where.
///
/// A struct with a nested code, so that new reasons can be added without breaking callers that
/// switch on the code.
public struct AdvertisementDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The payload ends inside a block: `needed` bytes were required from `offset`, fewer remain.
        case truncated
        /// The payload is longer than its fixed layout.
        case unexpectedLength
    }

    /// The payload's name as users know it: `Polar manufacturer data (0x006B)`.
    public let payload: String
    /// What went wrong.
    public let code: Code
    /// The byte offset where the fault lies.
    public let offset: Int
    /// The reason in words.
    public let reason: String

    /// An error about `payload` at `offset`.
    public init(payload: String, code: Code, offset: Int, reason: String) {
        self.payload = payload
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    /// The payload, the reason and the offset, for logs and `healthgate decode`.
    public var description: String { "\(payload): \(reason) (at byte \(offset))" }
}

/// Why the live board could not start.
public struct WebBoardError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String

    /// An error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

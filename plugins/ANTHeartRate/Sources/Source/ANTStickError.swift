public import ANTProtocol

/// Why a stick session stopped: a command the stick refused or never answered, or a stick that
/// cannot receive. Each names the stick and, where there is one, the command.
public struct ANTStickError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Hashable, Sendable {
        /// The stick answered `command` with a failure code.
        case refused(command: String, code: ANTResponseCode)
        /// The stick did not answer `command` in time.
        case noAnswer(command: String)
        /// The stick has no channel that can receive.
        case cannotReceive
        /// The stick sent a startup message while running: it reset itself and its channel is
        /// gone.
        case restarted
    }

    /// The stick: its path.
    public var stick: String
    /// What went wrong.
    public var code: Code

    /// An error for `stick`.
    public init(stick: String, _ code: Code) {
        self.stick = stick
        self.code = code
    }

    public var description: String {
        switch code {
        case .refused(let command, let code): "the ANT stick \(stick) refused \(command): \(code.name)"
        case .noAnswer(let command): "the ANT stick \(stick) did not answer \(command)"
        case .cannotReceive: "the ANT stick \(stick) has no receive channel"
        case .restarted: "the ANT stick \(stick) reset itself"
        }
    }
}

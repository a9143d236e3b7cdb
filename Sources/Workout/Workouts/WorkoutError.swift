public import HealthModel
/// A workout operation that failed, with the context needed to understand why.
///
/// A struct with a nested code, so new codes can be added without breaking users.
public struct WorkoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The action is not allowed in the session's current state.
        case invalidTransition
        /// The session has ended; it cannot be changed or restarted.
        case sessionEnded
        /// No workout is in progress.
        case noSession
        /// A workout is already in progress; end it first.
        case alreadyActive
        /// A command argument is missing or wrong.
        case invalidArgument
        /// The user profile in the configuration is wrong.
        case invalidProfile
        /// The workout state store could not commit or read the workout.
        case persistence
    }

    /// What went wrong.
    public var code: Code
    /// The state the session was in, when relevant.
    public var state: WorkoutSessionState?
    /// The action that was refused, when relevant.
    public var action: WorkoutAction?
    /// A human explanation with the specific context (key path, file path, …).
    public var message: String
    /// For profile errors: the key path in the configuration file (`profile.weightKilograms`).
    public var keyPath: String?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, state: WorkoutSessionState? = nil, action: WorkoutAction? = nil,
        keyPath: String? = nil
    ) {
        self.code = code
        self.message = message
        self.state = state
        self.action = action
        self.keyPath = keyPath
    }

    /// The message without the key path prefix.
    public var reason: String {
        guard let keyPath, message.hasPrefix(keyPath + ": ") else { return message }
        return String(message.dropFirst(keyPath.count + 2))
    }

    /// The message.
    public var description: String { message }
}

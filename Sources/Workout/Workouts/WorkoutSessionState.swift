public import HealthModel
/// The life-cycle state of a workout session (HKWorkoutSessionState).
///
/// `notStarted → prepared → running ⇄ paused → stopped → ended`. Samples are collected only while
/// `running`. `stopped` means collection has stopped and the workout waits to be ended; `ended` is
/// final: an ended session never runs again.
public enum WorkoutSessionState: String, Hashable, Sendable, Codable, CaseIterable {
    case notStarted, prepared, running, paused, stopped, ended
}

/// What an allowed action does to the session.
public enum WorkoutTransition: Hashable, Sendable {
    /// The state changes to the given state.
    case moveTo(WorkoutSessionState)
    /// The state stays; the action records an event or a new activity.
    case record
    /// The action has no effect (pausing while paused, resuming while running).
    case ignored
}

extension WorkoutSessionState {
    /// The transition table: what `action` does in this state.
    ///
    /// - Throws: ``WorkoutError`` with code ``WorkoutError/Code/sessionEnded`` for any action on
    ///   an ended session, and ``WorkoutError/Code/invalidTransition`` for any other pair the
    ///   table does not allow. Only pause-while-paused and resume-while-running are ignored
    ///   rather than refused.
    public func transition(for action: WorkoutAction) throws(WorkoutError) -> WorkoutTransition {
        switch (self, action) {
        case (.ended, _):
            throw WorkoutError(
                .sessionEnded, "the workout has ended; it cannot \(action.rawValue)", state: self,
                action: action)
        case (.notStarted, .prepare): return .moveTo(.prepared)
        case (.notStarted, .start), (.prepared, .start): return .moveTo(.running)
        case (.prepared, .end): return .moveTo(.ended)
        case (.running, .pause): return .moveTo(.paused)
        case (.running, .resume), (.paused, .pause): return .ignored
        case (.paused, .resume): return .moveTo(.running)
        case (.running, .lap), (.running, .marker), (.running, .segment), (.running, .beginActivity),
            (.paused, .lap), (.paused, .marker), (.paused, .segment), (.paused, .beginActivity):
            return .record
        case (.running, .stop), (.paused, .stop): return .moveTo(.stopped)
        case (.running, .end), (.paused, .end), (.stopped, .end): return .moveTo(.ended)
        default:
            throw WorkoutError(
                .invalidTransition, "cannot \(action.rawValue) a workout that is \(rawValue)",
                state: self, action: action)
        }
    }
}

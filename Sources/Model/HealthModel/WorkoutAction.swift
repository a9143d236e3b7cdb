/// Something a user or the controller asks of a session.
public enum WorkoutAction: String, Hashable, Sendable, Codable, CaseIterable {
    /// Get ready (sensors warming up); no time is counted yet.
    case prepare
    /// Start counting time and collecting samples.
    case start
    case pause
    case resume
    /// Record a lap event (the interval since the previous lap).
    case lap
    /// Record an instant marker event.
    case marker
    /// Record a segment event over an interval.
    case segment
    /// Close the current activity and begin another (multisport).
    case beginActivity
    /// Stop collecting; the session waits for `end`.
    case stop
    /// Finish the session and produce the workout.
    case end
}

public import Workouts

/// What the live board's server shows: the board now, and the roster whose profiles give a stored
/// workout's chart its heart-rate zones.
///
/// The runtime's `LiveBoard` is the feed the gateway serves; the server knows only this protocol,
/// so presentation depends on no runtime module.
///
/// Isolation: called from the web server's connection threads and from the task that publishes
/// updates, at once; an implementation is safe from any thread and returns without waiting.
public protocol BoardFeed: Sendable {
    /// Every participant's tile now.
    func snapshot() -> BoardSnapshot
    /// The participants and their profiles now.
    var roster: ParticipantRoster { get }
    /// Replaces the handler called whenever a tile may have changed (a reading arrived); it is
    /// called on the feeding task and must return at once. Nil removes it.
    func setChangeHandler(_ handler: (@Sendable () -> Void)?)
    /// Signs `strap` in to `participant` (an existing participant's name, or a new member's),
    /// as `healthgate participant assign STRAP NAME [--keep]` does: committed before it returns.
    /// - Returns: the participant as they are now (their devices include the strap).
    /// - Throws: ``Workouts/WorkoutError`` (``Workouts/WorkoutError/Code/invalidArgument`` for a
    ///   bad name or strap, ``Workouts/WorkoutError/Code/persistence`` when the store fails).
    func signIn(strap: String, participant: String, keep: Bool) async throws(WorkoutError) -> Participant
}

/// One part of a running gateway (the store, a board's server, the watchdog, the control
/// socket…): what it does before the bus starts, beside the bus while it runs, and once it has
/// ended. ``GatewayParts`` starts the parts in the order of its list and stops them in reverse.
///
/// Every closure is optional in effect: a part that only runs beside the bus has no `start` or
/// `stop`, one that only opens and closes something has no `work`.
struct GatewayPart: Sendable {
    /// The part's name in the log lines about it.
    var name: String
    /// Runs before the bus starts, after the parts before it in the list started. Throwing
    /// fails the run: the parts started before it are stopped, in reverse, and the error is
    /// rethrown as it is (a ``CommandError`` whose message names the setting at fault).
    var start: @Sendable () async throws -> Void = {}
    /// Runs as a child task beside the bus, from when the bus starts until it ends; it is
    /// cancelled then. Returning early ends the part's work only. An error other than
    /// cancellation is logged with the part's name; the gateway runs on.
    var work: (@Sendable () async throws -> Void)?
    /// Runs once the bus has ended, after the parts later in the list stopped. It cannot fail:
    /// a part logs its own failure to stop, naming itself.
    var stop: @Sendable () async -> Void = {}
}

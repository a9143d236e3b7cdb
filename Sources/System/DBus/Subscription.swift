/// One signal match: the token sd-bus holds, unretained, as the match's and the install
/// callback's userdata.
///
/// Held like ``PendingCall``: immutable, its changing state in ``BusCore/subscriptions``, which
/// keeps it alive while the match is installed; it refers to the core unowned and to no closure
/// of its own.
final class Subscription: Sendable {
    /// The match rule, in the bus's syntax.
    let rule: String
    /// Where matching signals go.
    let stream: AsyncThrowingStream<DBusSignal, any Error>.Continuation
    /// The core whose actor runs the callbacks. `unowned`: sd-bus calls back only from inside
    /// the core's own `sd_bus_process`.
    unowned let core: BusCore

    init(rule: String, stream: AsyncThrowingStream<DBusSignal, any Error>.Continuation, core: BusCore) {
        self.rule = rule
        self.stream = stream
        self.core = core
    }

    /// The match's state while it is installed, owned by the core.
    struct State {
        let subscription: Subscription
        /// The caller waiting for the bus to install the match; nil once it has been told.
        var installed: CheckedContinuation<Void, any Error>?
        /// The sd-bus slot of the match.
        var slot: OpaquePointer?
    }
}

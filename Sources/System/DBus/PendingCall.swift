/// One method call in flight: the token sd-bus holds, unretained, as the reply callback's
/// userdata.
///
/// Immutable: what changes while the call is in flight (its continuation, its slot) is the
/// core's ``State``, in ``BusCore/pendingCalls``, which keeps the token alive until the slot is
/// released. It refers to no closure, so leaving that table frees it on every path (reply,
/// cancellation, or the bus dropping).
final class PendingCall: Sendable {
    /// What the call is, for errors: `org.bluez.Device1.Connect on /org/bluez/hci0/dev_…`.
    let context: String
    /// The core whose actor runs the reply callback. `unowned`: sd-bus calls back only from
    /// inside the core's own `sd_bus_process`.
    unowned let core: BusCore

    init(context: String, core: BusCore) {
        self.context = context
        self.core = core
    }

    /// The call's state while it is in flight, owned by the core.
    struct State {
        let call: PendingCall
        let continuation: CheckedContinuation<[DBusValue], any Error>
        /// The sd-bus slot of the reply callback.
        var slot: OpaquePointer?
    }
}

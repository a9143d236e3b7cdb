/// One exported object: the token sd-bus holds, unretained, as the object callback's userdata.
///
/// Held like ``Subscription``: immutable, its slot in ``BusCore/exports``, which keeps it alive
/// while the object is exported.
final class ExportedObject: Sendable {
    /// The object's path.
    let path: String
    /// Where calls on the object go.
    let stream: AsyncThrowingStream<DBusIncomingCall, any Error>.Continuation
    /// The core whose actor runs the callback. `unowned`: sd-bus calls back only from inside the
    /// core's own `sd_bus_process`.
    unowned let core: BusCore

    init(path: String, stream: AsyncThrowingStream<DBusIncomingCall, any Error>.Continuation, core: BusCore) {
        self.path = path
        self.stream = stream
        self.core = core
    }

    /// The object's state while it is exported, owned by the core.
    struct State {
        let object: ExportedObject
        /// The sd-bus slot of the object.
        var slot: OpaquePointer?
    }
}

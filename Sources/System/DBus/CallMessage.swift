/// A method call message kept until it is answered: one reference on an `sd_bus_message`,
/// released with the value.
///
/// Not `Sendable`: sd-bus objects are not thread-safe, so it lives only in the core's
/// ``BusCore/incomingCalls`` and is only touched isolated to the core.
final class CallMessage {
    let message: OpaquePointer
    private let sd: SDBus

    init(_ message: OpaquePointer, sd: SDBus) {
        self.sd = sd
        // sd_bus_message_ref returns the message it was given.
        self.message = sd.messageRef(message) ?? message
    }

    deinit {
        _ = sd.messageUnref(message)
    }
}

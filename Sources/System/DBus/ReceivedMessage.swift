// @unchecked Sendable: sd-bus passes a message to a callback inside sd_bus_process, which only
// BusCore.pump() calls, on the core's queue, and the message never leaves that thread. Region
// checking cannot see the C caller; Swift 6.0.3 (Debian 13's toolchain) also rejects a
// `nonisolated(unsafe)` local captured by `assumeIsolated`'s closure, which this type replaces.
/// A message sd-bus passed to a callback, carried into the core's isolation with `assumeIsolated`.
struct ReceivedMessage<Pointer>: @unchecked Sendable {
    /// The `sd_bus_message *` (optional for a reply, which sd-bus may leave out).
    let pointer: Pointer

    /// Wraps `pointer`.
    init(_ pointer: Pointer) { self.pointer = pointer }
}

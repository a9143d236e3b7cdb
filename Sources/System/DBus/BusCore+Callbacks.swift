// The one body of every sd-bus callback (sd_bus_add_object(3), sd_bus_add_match_async(3),
// sd_bus_call_async(3)): a C function pointer captures nothing, so each callback finds its owner
// through `userdata` and hands the rest to this.
extension BusCore {
    /// Runs `body` on the core's actor with the object behind `userdata` (an unretained
    /// `Owner`, kept alive by the core's table of its slots) and the `message` sd-bus passed;
    /// returns what `body` returns, or 0 without `userdata`.
    ///
    /// Callable only from an sd-bus callback: those run inside sd_bus_process, which only
    /// `pump()` calls, on the core's actor.
    static func callback<Owner: AnyObject & Sendable, Message>(
        _ userdata: UnsafeMutableRawPointer?, _ message: Message, core: (Owner) -> BusCore,
        _ body: @Sendable (_ core: isolated BusCore, _ owner: Owner, _ message: Message) -> Int32
    ) -> Int32 {
        guard let userdata else { return 0 }
        let owner = Unmanaged<Owner>.fromOpaque(userdata).takeUnretainedValue()
        // sd-bus passes `message` to this callback inside sd_bus_process, on the core's queue, and
        // it never leaves that thread (ReceivedMessage).
        let received = ReceivedMessage(message)
        return core(owner).assumeIsolated { body($0, owner, received.pointer) }
    }
}

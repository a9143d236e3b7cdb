import CSystemd
import LinuxSystem

// Method calls: sent with sd_bus_call_async(3), answered by its callback inside sd_bus_process.
extension BusCore {
    /// Sends `call` and suspends until its reply, its cancellation (``cancel(_:)``) or the bus
    /// closing.
    func call(
        _ call: PendingCall, destination: String, path: String, interface: String, member: String,
        arguments: [DBusValue], timeout: Duration?
    ) async throws -> [DBusValue] {
        try await withCheckedThrowingContinuation { continuation in
            start(
                call, continuation: continuation, destination: destination, path: path, interface: interface,
                member: member, arguments: arguments, timeout: timeout)
        }
    }

    private func start(
        _ call: PendingCall, continuation: CheckedContinuation<[DBusValue], any Error>,
        destination: String, path: String, interface: String, member: String,
        arguments: [DBusValue], timeout: Duration?
    ) {
        // A cancellation that came before this ran found nothing to cancel: the task says so.
        if Task.isCancelled {
            continuation.resume(throwing: CancellationError())
            return
        }
        guard let bus, closedError == nil else {
            continuation.resume(throwing: closed.with(context: call.context))
            return
        }
        do throws(DBusError) {
            var message: OpaquePointer?
            try Self.check(
                sd.messageNewMethodCall(bus, &message, destination, path, interface, member),
                "building the call")
            defer { _ = sd.messageUnref(message) }
            guard let message else { throw DBusError(errno: Errno.outOfMemory.rawValue, "building the call") }
            for argument in arguments {
                try coding.append(argument, to: message)
            }
            let microseconds: UInt64 = timeout.map { duration in
                let (seconds, attoseconds) = duration.components
                return UInt64(max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            } ?? 0
            var slot: OpaquePointer?
            let userdata = Unmanaged.passUnretained(call).toOpaque()
            try Self.check(
                sd.callAsync(
                    bus, &slot, message,
                    { reply, userdata, _ in
                        BusCore.callback(userdata, reply, core: \PendingCall.core) { core, call, reply in
                            core.complete(call, reply: reply)
                            return 1
                        }
                    }, userdata, microseconds),
                "sending the call")
            pendingCalls[ObjectIdentifier(call)] = PendingCall.State(call: call, continuation: continuation, slot: slot)
        } catch {
            continuation.resume(throwing: error.with(context: call.context))
            return
        }
        pump()
    }

    private func complete(_ call: PendingCall, reply: OpaquePointer?) {
        guard let state = pendingCalls.removeValue(forKey: ObjectIdentifier(call)) else { return }
        let result: Result<[DBusValue], any Error>
        if let reply, let error = sd.messageGetError(reply) {
            result = .failure(
                DBusError(
                    name: error.pointee.name.map { String(cString: $0) } ?? DBusError.noReply,
                    message: error.pointee.message.map { String(cString: $0) } ?? "",
                    context: call.context))
        } else if let reply {
            do throws(DBusError) {
                result = .success(try coding.readAll(reply))
            } catch {
                result = .failure(error.with(context: call.context))
            }
        } else {
            result = .failure(DBusError(name: DBusError.noReply, message: "no reply", context: call.context))
        }
        // Unref'ing our own slot inside its callback is allowed: sd-bus holds a reference while
        // it dispatches (sd_bus_slot_unref(3)).
        if let slot = state.slot { _ = sd.slotUnref(slot) }
        state.continuation.resume(with: result)
    }

    /// Gives up on `call`: its caller's task was cancelled. The reply, if one comes, is ignored.
    func cancel(_ call: PendingCall) {
        guard let state = pendingCalls.removeValue(forKey: ObjectIdentifier(call)) else { return }
        if let slot = state.slot { _ = sd.slotUnref(slot) }
        state.continuation.resume(throwing: CancellationError())
    }
}

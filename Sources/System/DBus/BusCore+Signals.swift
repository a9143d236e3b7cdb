import CSystemd
import Synchronization

// Signal matches: added with sd_bus_add_match_async(3); signals and the bus's answer to the
// AddMatch arrive through its callbacks inside sd_bus_process.
extension BusCore {
    /// Adds the match and suspends until the bus has installed it.
    func install(_ subscription: Subscription) async throws {
        try await withCheckedThrowingContinuation { installed in
            install(subscription, installed: installed)
        }
    }

    private func install(_ subscription: Subscription, installed: CheckedContinuation<Void, any Error>) {
        // A cancellation that came before this ran removed nothing: the task says so.
        if Task.isCancelled {
            installed.resume(throwing: CancellationError())
            return
        }
        guard let bus, closedError == nil else {
            installed.resume(throwing: closed)
            subscription.stream.finish(throwing: closed)
            return
        }
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(subscription).toOpaque()
        let result = sd.addMatchAsync(
            bus, &slot, subscription.rule,
            { message, userdata, _ in
                guard let message else { return 0 }
                return BusCore.callback(userdata, message, core: \Subscription.core) { core, subscription, message in
                    core.deliver(message, to: subscription)
                    return 0
                }
            },
            { reply, userdata, _ in
                BusCore.callback(userdata, reply, core: \Subscription.core) { core, subscription, reply in
                    core.installed(subscription, reply: reply)
                    return 1
                }
            }, userdata)
        if result < 0 {
            let error = DBusError(errno: -result, "adding match \(subscription.rule)")
            installed.resume(throwing: error)
            subscription.stream.finish(throwing: error)
            return
        }
        subscriptions[ObjectIdentifier(subscription)] = Subscription.State(
            subscription: subscription, installed: installed, slot: slot)
        pump()
    }

    /// Tells the caller waiting for `subscription`'s install, if one still is.
    private func finishInstall(_ subscription: Subscription, _ result: Result<Void, any Error>) {
        let key = ObjectIdentifier(subscription)
        guard let installed = subscriptions[key]?.installed else { return }
        subscriptions[key]?.installed = nil
        installed.resume(with: result)
    }

    private func installed(_ subscription: Subscription, reply: OpaquePointer?) {
        if let reply, let error = sd.messageGetError(reply) {
            let failure = DBusError(
                name: error.pointee.name.map { String(cString: $0) } ?? DBusError.noReply,
                message: error.pointee.message.map { String(cString: $0) } ?? "",
                context: "adding match \(subscription.rule)")
            finishInstall(subscription, .failure(failure))
            subscription.stream.finish(throwing: failure)
            remove(subscription)
            return
        }
        finishInstall(subscription, .success(()))
    }

    private func deliver(_ message: OpaquePointer, to subscription: Subscription) {
        guard subscriptions[ObjectIdentifier(subscription)] != nil else { return }
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        if let decoded = decodedSignal, decoded.message == message {
            if case .dropped = subscription.stream.yield(decoded.signal) { dropped.add(1, ordering: .relaxed) }
            return
        }
        do throws(DBusError) {
            let signal = DBusSignal(
                sender: text(sd.messageGetSender(message)),
                path: text(sd.messageGetPath(message)) ?? "",
                interface: text(sd.messageGetInterface(message)) ?? "",
                member: text(sd.messageGetMember(message)) ?? "",
                arguments: try coding.readAll(message))
            decodedSignal = (message, signal)
            if case .dropped = subscription.stream.yield(signal) {
                dropped.add(1, ordering: .relaxed)
            }
        } catch {
            // A signal we cannot decode is counted, not fatal to the subscription.
            dropped.add(1, ordering: .relaxed)
        }
        // sd-bus lets several handlers see one message; rewind for the next one (one that failed
        // to decode is read again by each).
        _ = sd.messageRewind(message, 1)
    }

    /// Removes the match: its consumer stopped, or its caller's task was cancelled. The stream
    /// finishes, and a caller still waiting for the install gets `CancellationError`.
    func remove(_ subscription: Subscription) {
        finishInstall(subscription, .failure(CancellationError()))
        if let state = subscriptions.removeValue(forKey: ObjectIdentifier(subscription)), let slot = state.slot {
            _ = sd.slotUnref(slot)
        }
        subscription.stream.finish()
    }
}

import CSystemd

// Exported objects: added with sd_bus_add_object(3); calls on them arrive through its callback
// inside sd_bus_process and are answered with sd_bus_send(3).
extension BusCore {
    /// Exports `object`.
    func add(_ object: ExportedObject) throws {
        guard let bus, closedError == nil else {
            object.stream.finish(throwing: closed)
            throw closed
        }
        var slot: OpaquePointer?
        let userdata = Unmanaged.passUnretained(object).toOpaque()
        let result = sd.addObject(
            bus, &slot, object.path,
            { message, userdata, _ in
                guard let message else { return 0 }
                return BusCore.callback(userdata, message, core: \ExportedObject.core) { core, object, message in
                    guard core.sd.messageIsMethodCall(message, nil, nil) > 0 else { return 0 }
                    return core.receive(message, for: object)
                }
            }, userdata)
        if result < 0 {
            let error = DBusError(errno: -result, "exporting \(object.path)")
            object.stream.finish(throwing: error)
            throw error
        }
        exports[ObjectIdentifier(object)] = ExportedObject.State(object: object, slot: slot)
    }

    /// Hands one method call to the object's stream. Returns 1: the call is ours to answer
    /// (an undecodable one is answered here with InvalidArgs).
    private func receive(_ message: OpaquePointer, for object: ExportedObject) -> Int32 {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        let key = nextIncomingCall
        nextIncomingCall += 1
        incomingCalls[key] = CallMessage(message, sd: sd)
        // The answer may come from any thread, or from the call's deinit: it is handed over.
        let answer: @Sendable (DBusIncomingCall.Answer) -> Void = { [weak self] outcome in
            self?.enqueue { $0.answer(key, with: outcome) }
        }
        do throws(DBusError) {
            let call = DBusIncomingCall(
                sender: text(sd.messageGetSender(message)), path: object.path,
                interface: text(sd.messageGetInterface(message)) ?? "",
                member: text(sd.messageGetMember(message)) ?? "",
                arguments: try coding.readAll(message), answer: answer)
            if exports[ObjectIdentifier(object)] == nil { return 1 }
            // A call the stream cannot take is answered NoReply when `call` is released.
            _ = object.stream.yield(call)
        } catch {
            self.answer(key, with: .error(name: DBusError.invalidArgs, message: error.description))
        }
        return 1
    }

    /// Answers the incoming call `key`, once: later answers find nothing.
    private func answer(_ key: UInt64, with outcome: DBusIncomingCall.Answer) {
        guard let call = incomingCalls.removeValue(forKey: key) else { return }
        send(outcome, to: call)
    }

    private func send(_ outcome: DBusIncomingCall.Answer, to call: CallMessage) {
        guard let bus, closedError == nil else { return }
        var reply: OpaquePointer?
        switch outcome {
        case .values(let values):
            guard sd.messageNewMethodReturn(call.message, &reply) >= 0, let built = reply else { return }
            do throws(DBusError) {
                for value in values { try coding.append(value, to: built) }
            } catch {
                _ = sd.messageUnref(built)
                send(.error(name: DBusError.invalidArgs, message: "cannot encode the reply: \(error)"), to: call)
                return
            }
        case .error(let name, let message):
            reply = Self.methodError(sd, to: call.message, name: name, message: message)
        }
        guard let reply else { return }
        _ = sd.send(bus, reply, nil)
        _ = sd.messageUnref(reply)
        pump()
    }

    /// A new error reply to `call`, or nil when sd-bus cannot make one.
    private static func methodError(_ sd: SDBus, to call: OpaquePointer, name: String, message: String) -> OpaquePointer? {
        var reply: OpaquePointer?
        _ = name.withCString { name in
            message.withCString { message in
                var error = sd_bus_error(name: name, message: message, _need_free: 0)
                return sd.messageNewMethodError(call, &reply, &error)
            }
        }
        return reply
    }

    /// Stops exporting `object`: its consumer stopped. The stream finishes.
    func remove(_ object: ExportedObject) {
        if let state = exports.removeValue(forKey: ObjectIdentifier(object)), let slot = state.slot {
            _ = sd.slotUnref(slot)
        }
        object.stream.finish()
    }
}

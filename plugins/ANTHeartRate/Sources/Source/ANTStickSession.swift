import ANTProtocol
import Dispatch
import FoundationEssentials
import GatewayRuntime
import GatewayTime
import HealthModel
import HealthStore
import LinuxSystem
import SampleBus

/// One open stick until its byte stream ends: the thin driver of ``ANTStickMachine``. It frames
/// the stick's bytes (``ANTFramer``), feeds the machine the messages and a tick every second,
/// reads a strap's checkpoint from the store the first time the strap is heard, and carries out
/// what the machine says (write to the stick, publish, log, status). Runs in one task; all of
/// its state is local to it.
struct ANTStickSession {
    let context: SourceContext
    let settings: ANTHeartRateSettings
    let ids: SampleIDGenerator
    let connection: any ByteStreamConnection
    /// The stick's name in logs and errors: its path.
    let stick: String
    /// Where the base of the gateway's clock is read: after a step, the dates the session holds
    /// (series, last heard) move with the clock (``ANTStickMachine/clockStepped(by:)``).
    let clockTrust: any ClockTrust

    private enum Input: Sendable {
        /// A chunk read from the stick, stamped when the reader delivered it: the arrival date
        /// of every frame it completes (the date of the samples those frames give).
        case bytes([UInt8], receivedAt: Date)
        case end(ByteStreamEnd)
        case tick
    }

    /// Inputs waiting for the session loop; beyond this the newest are dropped and counted (the
    /// reader bounds its own buffer the same way).
    static let inputLimit = 256

    /// Runs until the byte stream ends (returns why) or the stick fails (throws its
    /// ``ANTStickError``); cancellation ends it with `.closed`. Series being built are published
    /// on every way out.
    func run() async throws -> ByteStreamEnd {
        let queue = DispatchQueue(label: "healthgate.ant-heart-rate.\(connection.name)")
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .bufferingNewest(Self.inputLimit))
        let clock = context.clock
        // Each chunk stamped as the reader reads it, on its queue, not when the session loop gets
        // to it: a broadcast's samples carry the time its bytes arrived, however long the loop
        // was busy (publishing to a full bus, reading a checkpoint). Handed straight to the loop:
        // no task between the reader and it (a class's 20 straps send 81 broadcasts a second).
        let reader = try connection.startReading(queue: queue) { event in
            switch event {
            case .bytes(let bytes): continuation.yield(.bytes(bytes, receivedAt: clock.now()))
            case .end(let reason):
                continuation.yield(.end(reason))
                continuation.finish()
            }
        }
        defer { reader.cancel() }
        var machine = ANTStickMachine(
            stick: stick, networkKey: settings.networkKey, ids: ids, lostAfter: settings.lostAfter,
            seriesMaxBeats: settings.seriesMaxBeats, seriesSeconds: settings.seriesSeconds)
        var framer = ANTFramer()
        var base = clockTrust.clockBase()
        var end = ByteStreamEnd.closed
        var failure: ANTStickError?
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    do { try await clock.sleep(for: .seconds(1)) } catch { return }
                    continuation.yield(.tick)
                }
            }
            failure = await carryOut(machine.start(at: clock.now()))
            loop: for await input in inputs {
                if failure != nil || Task.isCancelled { break }
                let now = clockTrust.clockBase()
                if let seconds = now.seconds(from: base), seconds != 0 {
                    machine.clockStepped(by: seconds)
                    base = now
                }
                switch input {
                case .end(let reason):
                    end = reason
                    break loop
                case .tick:
                    failure = await carryOut(machine.tick(at: clock.now()))
                    for strap in machine.straps { context.status.setDetail("strap \(strap)", machine.summary(of: strap)) }
                case .bytes(let bytes, let receivedAt):
                    for output in framer.append(bytes) {
                        switch output {
                        case .resynchronised(let count):
                            failure = await carryOut(machine.resynchronised(skipping: count, at: clock.now()))
                            context.status.setDetail("skipped bytes", "\(framer.skippedBytes) in \(framer.episodes) episodes")
                        case .frame(let frame):
                            let message: ANTMessage
                            do {
                                message = try ANTMessage(frame: frame)
                            } catch {
                                context.logger.warning("malformed message from the stick: \(error)", device: stick)
                                continue
                            }
                            let now = Self.storePrecision(receivedAt)
                            if let strap = machine.unknownStrap(in: message) {
                                let restored = await restoredState(of: strap)
                                failure = await carryOut(machine.meet(strap, restored: restored, at: now))
                            }
                            if failure == nil { failure = await carryOut(machine.receive(message, at: now)) }
                        }
                        if failure != nil { break loop }
                    }
                }
            }
            group.cancelAll()
        }
        _ = await carryOut(machine.finish())
        if let failure { throw failure }
        return end
    }

    /// `date` on the store's grid of whole microseconds: what a sink commits is then exactly what
    /// the live views (a workout's statistics, the board) computed from, not a value off by a fraction of a microsecond.
    static func storePrecision(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000)
    }

    /// The checkpoint the store holds for `strap`, if any.
    private func restoredState(of strap: ANTDeviceIdentifier) async -> StrapCheckpoint? {
        do {
            guard let checkpoint = try await context.checkpoints.checkpoint(namespace: StrapCheckpoint.namespace, key: strap.description)
            else { return nil }
            return try StrapCheckpoint(checkpoint)
        } catch {
            context.logger.warning("cannot read the checkpoint of \(strap): \(error); its series starts afresh", device: strap.description)
            return nil
        }
    }

    /// Carries out `actions` in order; returns the failure that ends the session, if one does.
    private func carryOut(_ actions: [ANTStickMachine.Action]) async -> ANTStickError? {
        for action in actions {
            switch action {
            case .send(let message):
                do {
                    try connection.write(message.encoded)
                } catch {
                    // The stream's end says why (an unplugged stick); the machine's timeout
                    // catches a write that silently went nowhere.
                    context.logger.warning("cannot write \(ANTMessageID.name(of: message.id)) to the stick: \(error)", device: stick)
                }
            case .publish(let records, let checkpoint):
                if let checkpoint {
                    await context.publisher.publish(records, checkpoint: checkpoint)
                } else {
                    await context.publisher.publish(records)
                }
            case .log(let level, let message, let device):
                let logLevel: LogLevel =
                    switch level {
                    case .info: .info
                    case .notice: .notice
                    case .warning: .warning
                    case .error: .error
                    }
                context.logger.log(logLevel, message, device: device)
            case .detail(let name, let value):
                context.status.setDetail(name, value)
            case .reportError(let message):
                context.status.reportError(message)
            case .fail(let error):
                return error
            }
        }
        return nil
    }
}

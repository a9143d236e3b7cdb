import HealthStore
import FoundationEssentials
import HealthModel
import LinuxSystem
import SampleBus
import GatewayRuntime
import Synchronization
import Dispatch

/// Counts garbage per kind for the status board, shared by every session of one source.
final class GarbageCounters: Sendable {
    private let counts = Mutex<[PedometerDecodeError.Code: Int]>([:])

    /// Counts one rejected frame and returns the new total for its code.
    func count(_ code: PedometerDecodeError.Code) -> Int {
        counts.withLock { counts in
            counts[code, default: 0] += 1
            return counts[code, default: 0]
        }
    }

    var snapshot: [PedometerDecodeError.Code: Int] { counts.withLock { $0 } }
}

/// The relay's bookkeeping, shared by the relay task and the decoding loop: chunks handed over
/// and not yet taken (the bound), and chunks dropped because that bound was reached.
final class RelayCounters: Sendable {
    let backlog = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
}

/// Everything a session needs that does not change between connections.
struct SessionEnvironment: Sendable {
    var context: SourceContext
    var ids: SampleIDGenerator
    var counter: StepCounter
    var garbage: GarbageCounters
    var identificationTimeout: Duration
    /// Readings held while waiting for identification; beyond this the oldest are dropped.
    var pendingLimit = 64
    /// Chunks of input (at most 4 KiB each) waiting between the reader and the decoder; while
    /// this many wait, new ones are dropped and counted (`chunksDropped`). With the reader's own
    /// bound this caps what a flood can make the session hold at about 1 MiB + 64 KiB.
    var inputChunkLimit = 16
    /// The shortest time between two logged garbage warnings of one kind.
    var warningInterval: TimeInterval = 10
}

/// One connection's life: ask the device who it is, decode its lines, turn counter readings into
/// samples published with the device's new counter checkpoint, until the byte stream ends.
struct PedometerSession {
    let environment: SessionEnvironment
    let connection: any ByteStreamConnection
    var decoder: AnyPedometerStreamDecoder
    /// The identity known before the exchange: udev's, or the path's.
    let transportDevice: Device

    private enum Input: Sendable {
        /// Bytes from the line; `afterGap` when input was dropped right before them.
        case chunk([UInt8], afterGap: Bool)
        case end(ByteStreamEnd)
        case identificationTimeout
    }

    /// Runs until the connection ends; returns why. Cancellation ends it with `.closed` (the
    /// caller closes the connection).
    mutating func run() async throws -> ByteStreamEnd {
        let queue = DispatchQueue(label: "healthgate.serial-pedometer.\(connection.name)")
        let reader = try connection.startReading(queue: queue)
        defer { reader.cancel() }
        var identification = IdentificationStateMachine(
            transportDevice: transportDevice, asks: decoder.identificationRequest != nil,
            pendingLimit: environment.pendingLimit)
        if let request = decoder.identificationRequest { ask(request) }
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let relay = RelayCounters()
        let limit = environment.inputChunkLimit
        let clock = environment.context.clock
        let timeout = environment.identificationTimeout
        var end = ByteStreamEnd.closed
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await Self.relay(reader, into: continuation, counters: relay, limit: limit) }
            if !identification.isIdentified {
                group.addTask {
                    do {
                        try await clock.sleep(for: timeout)
                        continuation.yield(.identificationTimeout)
                    } catch {
                        // Cancelled: the session ended before the timeout; nothing to do.
                    }
                }
            }
            var limiter = WarningLimiter<PedometerDecodeError.Code>(interval: environment.warningInterval)
            var reportedDrops = 0
            loop: for await input in inputs {
                // A stop must not wait for a backlog of input to be decoded.
                if Task.isCancelled { break }
                switch input {
                case .identificationTimeout:
                    guard let held = identification.timedOut() else { continue }
                    let device = identification.device
                    environment.context.logger.notice(
                        "no answer to the identification request within \(timeout); counting as \(device.localIdentifier ?? connection.name)",
                        device: device.displayName)
                    await count(held, device: device)
                case .end(let reason):
                    end = reason
                    break loop
                case .chunk(let bytes, let afterGap):
                    relay.backlog.subtract(1, ordering: .releasing)
                    if afterGap {
                        // Input was lost right before this chunk: the line being assembled is
                        // cut, and joined with what follows it could pass for a reading.
                        decoder.discardPartialFrame()
                        reportDrops(relay.dropped.load(ordering: .relaxed) + reader.droppedChunks, reported: &reportedDrops)
                    }
                    for outcome in decoder.feed(bytes) {
                        await take(outcome, identification: &identification, limiter: &limiter)
                    }
                }
            }
            group.cancelAll()
        }
        if Task.isCancelled { end = .closed }
        // Readings still waiting for an identity when the line dropped are counted under the
        // transport identity rather than lost.
        await count(identification.ending(), device: identification.device)
        return end
    }

    /// Sends the decoder's identification request; a failure is logged, and the session waits
    /// for the timeout.
    private func ask(_ request: [UInt8]) {
        do {
            try connection.write(request)
        } catch {
            environment.context.logger.warning(
                "cannot send the identification request: \(error)", device: transportDevice.displayName)
        }
    }

    /// Hands the reader's chunks to the decoding loop. Bounded by this relay, not by the stream:
    /// it counts the chunks it handed over and the loop has not taken, and drops a new chunk
    /// when `limit` are waiting (a flood of short lines once grew memory without limit here).
    /// Dropping here, not in the stream, lets it mark the next chunk it hands over as following
    /// a gap; the end event (and the identification timeout, sent beside it) is never dropped.
    private static func relay(
        _ reader: ByteStreamReader, into continuation: AsyncStream<Input>.Continuation, counters relay: RelayCounters,
        limit: Int
    ) async {
        var gap = false
        var readerDrops = 0
        for await event in reader.events {
            switch event {
            case .bytes(let bytes):
                guard relay.backlog.load(ordering: .acquiring) < limit else {
                    relay.dropped.add(1, ordering: .relaxed)
                    gap = true
                    continue
                }
                // The reader drops only when this relay falls 256 chunks behind, which its
                // dropping keeps from happening; its count is checked all the same.
                let droppedByReader = reader.droppedChunks
                let afterGap = gap || droppedByReader != readerDrops
                readerDrops = droppedByReader
                gap = false
                relay.backlog.add(1, ordering: .releasing)
                continuation.yield(.chunk(bytes, afterGap: afterGap))
            case .end(let reason):
                continuation.yield(.end(reason))
            }
        }
        continuation.finish()
    }

    /// Shows the chunks dropped so far (`chunksDropped`) when the count changed.
    private func reportDrops(_ drops: Int, reported: inout Int) {
        guard drops != reported else { return }
        reported = drops
        environment.context.status.setDetail("chunksDropped", String(drops))
    }

    /// Acts on one decoded frame: an identity, a reading (counted or held, as `identification`
    /// decides), or garbage (counted, and logged as `limiter` admits).
    private func take(
        _ outcome: Result<PedometerMessage, PedometerDecodeError>, identification: inout IdentificationStateMachine,
        limiter: inout WarningLimiter<PedometerDecodeError.Code>
    ) async {
        let context = environment.context
        switch outcome {
        case .success(.identification(let identity)):
            let (announce, release) = identification.identified(as: identity)
            let device = identification.device
            if announce {
                context.logger.info(
                    "identified: \(identity.manufacturer ?? "?") \(identity.model ?? "?"), serial \(identity.serialNumber ?? "?"), firmware \(identity.firmwareVersion ?? "?")",
                    device: device.displayName)
            }
            await count(release, device: device)
        case .success(.reading(let reading)):
            let date = context.clock.now()
            switch identification.received(reading, at: date) {
            case .count:
                await handle(reading, at: date, device: identification.device)
            case .held:
                break
            case .heldDroppingOldest:
                context.status.recordsDropped(1)
                context.logger.warning(
                    "dropped a reading held while waiting for identification", device: identification.device.displayName)
            }
        case .failure(let error):
            let total = environment.garbage.count(error.code)
            context.status.setDetail("garbage.\(error.code.rawValue)", String(total))
            let admitted = limiter.admit(error.code, at: context.clock.now())
            if admitted.log {
                let held = admitted.heldBack > 0 ? " (\(admitted.heldBack) more of this kind not logged; counted in status)" : ""
                context.logger.warning("ignored garbage from \(connection.name): \(error)\(held)", device: identification.device.displayName)
            } else {
                context.status.setDetail("warningsSuppressed", String(limiter.suppressedTotal))
            }
        }
    }

    /// Counts readings held while the device's identity was awaited, in the order they came,
    /// under `device`.
    private func count(_ held: [IdentificationStateMachine.Held], device: Device) async {
        for (reading, date) in held { await handle(reading, at: date, device: device) }
    }

    /// Merges what the device said about itself into the transport's identity.
    static func device(_ transport: Device, identifiedAs identity: PedometerIdentity) -> Device {
        var device = transport
        device.manufacturer = identity.manufacturer ?? transport.manufacturer
        device.model = identity.model ?? transport.model
        device.firmwareVersion = identity.firmwareVersion ?? transport.firmwareVersion
        if let serial = identity.serialNumber {
            device.localIdentifier = serial
            device.name = identity.model.map { "\($0) \(serial)" } ?? serial
        }
        return device
    }

    /// Counts one reading: the delta from the device's checkpoint, published together with the
    /// new checkpoint.
    ///
    /// Ordering: the samples and the new counter state travel as one publish; the SQLite store
    /// commits both in one transaction. A crash therefore leaves the stored state and the stored
    /// samples in agreement: the next reading after a restart counts from the last committed
    /// state, so the interval lost to the crash is counted then, once. The checkpoint is keyed by
    /// the device identity, so another port or source reading the same device continues its count.
    private func handle(_ reading: PedometerReading, at date: Date, device: Device) async {
        let context = environment.context
        let key = device.localIdentifier ?? connection.name
        var previous: StepCounterState?
        do {
            if let checkpoint = try await context.checkpoints.checkpoint(namespace: CounterCheckpoint.namespace, key: key) {
                previous = try CounterCheckpoint.state(in: checkpoint)
            }
        } catch {
            context.logger.error(
                "cannot read the stored counter: \(error); this reading sets a new baseline", device: device.displayName)
            context.status.reportError("\(device.displayName): \(error)", at: date)
        }
        let advance = environment.counter.advance(
            from: previous, steps: reading.steps, distanceMeters: reading.distanceMeters, at: date)
        let checkpoint: SourceCheckpoint
        do {
            checkpoint = try CounterCheckpoint.make(advance.state, key: key)
        } catch {
            // Nothing is published: the next reading counts from the previous state, so this
            // interval is counted then, not lost and not twice.
            context.logger.error("cannot encode the counter state: \(error)", device: device.displayName)
            context.status.reportError("\(device.displayName): \(error)", at: date)
            return
        }
        switch advance.event {
        case .baseline:
            context.logger.info("first reading, baseline \(reading.steps) steps", device: device.displayName)
        case .reset:
            context.logger.notice(
                "step counter dropped from \(previous?.steps ?? 0) to \(reading.steps): device reboot, new baseline; counting the \(reading.steps) steps since",
                device: device.displayName)
        case .wrapped:
            context.logger.info("step counter wrapped around 2^32", device: device.displayName)
        case .counted:
            break
        }
        var records: [HealthRecord] = []
        if let delta = advance.delta, let previous {
            var metadata = Metadata()
            metadata.syncIdentifier =
                "serial-pedometer:\(key):\(Int64((previous.date.timeIntervalSince1970 * 1000).rounded())):\(previous.steps)"
            metadata.syncVersion = Int64((date.timeIntervalSince1970 * 1000).rounded())
            if advance.event != .counted { metadata["healthgate.counterEvent"] = .string(advance.event.rawValue) }
            if delta.spansGap { metadata["healthgate.gap"] = .bool(true) }
            if let cadence = reading.cadence { metadata["healthgate.cadence"] = .double(cadence) }
            if let deviceTime = reading.deviceTime {
                metadata["healthgate.deviceTime"] = .double(deviceTime.timeIntervalSince1970)
            }
            do {
                if delta.steps > 0 {
                    records.append(.quantity(try QuantitySample(
                        id: environment.ids.next(), type: .stepCount, quantity: Quantity(Double(delta.steps), .count),
                        start: delta.start, end: delta.end, device: device, metadata: metadata)))
                }
                if let meters = delta.distanceMeters, meters > 0 {
                    var distanceMetadata = metadata
                    distanceMetadata.syncIdentifier = (metadata.syncIdentifier ?? "") + ":distance"
                    records.append(.quantity(try QuantitySample(
                        id: environment.ids.next(), type: .distanceWalkingRunning, quantity: Quantity(meters, .meter),
                        start: delta.start, end: delta.end, device: device, metadata: distanceMetadata)))
                }
            } catch {
                // Not published, and neither is the checkpoint: the next reading counts this
                // interval again from the previous state.
                context.logger.error("cannot build a sample: \(error)", device: device.displayName)
                context.status.reportError("\(device.displayName): \(error)", at: date)
                return
            }
        }
        await context.publisher.publish(records, checkpoint: checkpoint)
        context.status.setDetail("counter.\(key)", String(reading.steps))
    }
}

import Dispatch
import FoundationEssentials
import GatewayRuntime
import HealthModel
import HealthStore
import HealthgateAdapter
import LinuxSystem
import SampleBus
import Synchronization

/// Reads an adapter's stdout until it ends: splits it into lines (at most `maxLineBytes`),
/// decodes each message, and acts on it: readings checked and published, checkpoints published
/// with them, devices described, log and status lines passed on, and a specific answer on the
/// adapter's stdin for every line it cannot take. See ``AdapterRun`` for the flow control.
final class AdapterOutputReader: Sendable {
    private let run: AdapterRun
    private let process: ChildProcess
    private let input: AdapterInput
    private let stopper: AdapterStopper
    private let acknowledger: CheckpointAcknowledger
    private let shared = Mutex<(helloSeen: Bool, helloFailure: String?)>((false, nil))

    init(run: AdapterRun, process: ChildProcess, input: AdapterInput, stopper: AdapterStopper, acknowledger: CheckpointAcknowledger) {
        self.run = run
        self.process = process
        self.input = input
        self.stopper = stopper
        self.acknowledger = acknowledger
    }

    /// Whether the adapter said hello.
    var helloSeen: Bool { shared.withLock { $0.helloSeen } }
    /// Why the handshake failed, when it did.
    var helloFailure: String? {
        get { shared.withLock { $0.helloFailure } }
        set { shared.withLock { $0.helloFailure = newValue } }
    }

    /// The state of one read-through.
    private struct Progress {
        var converter: AdapterReadingConverter
        let decoder = AdapterOutputDecoder()
        var pending: [HealthRecord] = []
        var line = 0
        var refused = 0
        var skipped = 0
        var taken = 0
        var fatal: String?
    }

    /// Reads until the adapter's stdout ends. Returns the protocol error that made the gateway
    /// stop the adapter, if one did.
    func readUntilEnd() async -> String? {
        let queue = DispatchQueue(label: "healthgate.exec.stdout")
        let limit = run.settings.maxLineBytes
        var progress = Progress(converter: AdapterReadingConverter(sourceName: run.name, ids: run.ids))
        var buffer: [UInt8] = []
        var skipping = false
        while true {
            let chunk: [UInt8]
            do {
                chunk = try await ChildProcess.read(process.output, maximum: 65_536, on: queue)
            } catch {
                run.context.logger.error("cannot read the adapter's output: \(error)")
                break
            }
            if chunk.isEmpty { break }
            var start = chunk.startIndex
            while let newline = chunk[start...].firstIndex(of: 0x0A) {
                progress.line += 1
                if skipping {
                    skipping = false
                } else {
                    buffer += chunk[start..<newline]
                    await handle(buffer, &progress)
                }
                buffer.removeAll(keepingCapacity: true)
                start = newline + 1
            }
            if !skipping {
                buffer += chunk[start...]
                if buffer.count > limit {
                    skipping = true
                    buffer.removeAll()
                    tooLong(line: progress.line + 1, &progress)
                }
            }
            await publishPending(&progress)
        }
        if !buffer.isEmpty, !skipping {
            progress.line += 1
            await handle(buffer, &progress)
        }
        await publishPending(&progress)
        return progress.fatal
    }

    private func tooLong(line: Int, _ progress: inout Progress) {
        progress.skipped += 1
        let reason = "line \(line) is longer than maxLineBytes (\(run.settings.maxLineBytes) bytes): skipped"
        run.observer?(.malformed(line: line, reason: reason))
        run.context.logger.warning(reason)
        input.send(ErrorMessage(reason: reason))
        run.context.status.setDetail("linesSkipped", String(progress.skipped))
    }

    private func handle(_ bytes: [UInt8], _ progress: inout Progress) async {
        if bytes.count > run.settings.maxLineBytes {
            tooLong(line: progress.line, &progress)
            return
        }
        // A blank line (a stray newline) says nothing.
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        let message: AdapterOutput
        do {
            message = try progress.decoder.decode(bytes.last == 0x0D ? Array(bytes.dropLast()) : bytes)
        } catch {
            progress.skipped += 1
            let reason = "line \(progress.line): \(error.reason)"
            run.observer?(.malformed(line: progress.line, reason: error.reason))
            run.context.logger.warning("the adapter wrote no message: \(reason)")
            input.send(ErrorMessage(reason: reason))
            run.context.status.setDetail("linesSkipped", String(progress.skipped))
            return
        }
        run.observer?(.message(line: progress.line, message))
        guard helloSeen else {
            guard case .hello(let hello) = message else {
                fail("line \(progress.line): the adapter's first message must be its hello, not \(message.typeName)", &progress)
                return
            }
            guard AdapterProtocol.supportedVersions.contains(hello.protocolVersion) else {
                fail(
                    "the adapter speaks protocol \(hello.protocolVersion); this gateway speaks "
                        + AdapterProtocol.supportedVersions.map(String.init).joined(separator: ", "), &progress)
                return
            }
            shared.withLock { $0.helloSeen = true }
            run.context.logger.info("the adapter \(hello.adapter)\(hello.version.map { " \($0)" } ?? "") speaks protocol \(hello.protocolVersion)")
            run.context.status.setDetail("adapter", hello.adapter + (hello.version.map { " \($0)" } ?? ""))
            return
        }
        switch message {
        case .hello:
            progress.skipped += 1
            input.send(ErrorMessage(reason: "line \(progress.line): a second hello"))
        case .device(let device):
            progress.converter.describe(device)
            run.context.logger.info("the adapter reads \(device.name ?? device.id)", device: device.id)
        case .quantity, .correlation, .heartbeats:
            do throws(AdapterReadingRefusal) {
                if let reason = run.veto?(progress.line, message) { throw AdapterReadingRefusal(reason) }
                progress.pending.append(try progress.converter.record(message, now: run.context.clock.now()))
                progress.taken += 1
                if progress.pending.count >= AdapterRun.batchLimit { await publishPending(&progress) }
            } catch {
                progress.refused += 1
                let id = message.readingID
                run.context.logger.warning(
                    "refused the reading on line \(progress.line)\(id.map { " (\($0))" } ?? ""): \(error.reason)", device: message.deviceID)
                input.send(RefusedMessage(line: progress.line, reason: error.reason, id: id))
                run.observer?(.refused(line: progress.line, id: id, reason: error.reason))
                run.context.status.setDetail("readingsRefused", String(progress.refused))
                run.context.status.setMetric("healthgate_adapter_readings_refused_total", [:], Double(progress.refused))
            }
        case .checkpoint(let checkpoint):
            let payload = checkpoint.state.canonicalBytes
            let records = progress.pending
            progress.pending = []
            acknowledger.published(state: checkpoint.state, payload: payload)
            await run.context.publisher.publish(
                records, checkpoint: SourceCheckpoint(namespace: AdapterRun.checkpointNamespace, key: run.name, payload: Data(payload)))
        case .log(let line):
            run.context.logger.log(line.level, "adapter: \(line.message)", device: line.device)
        case .status(let status):
            run.context.status.setDetail("adapterState", status.state + (status.detail.map { ": \($0)" } ?? ""))
        }
    }

    /// Ends the run for a protocol error: the adapter is told, and stopped.
    private func fail(_ reason: String, _ progress: inout Progress) {
        guard progress.fatal == nil else { return }
        progress.fatal = reason
        helloFailure = reason
        run.context.logger.error(reason)
        input.send(ErrorMessage(reason: reason, fatal: true))
        stopper.stop(reason: reason)
    }

    private func publishPending(_ progress: inout Progress) async {
        guard !progress.pending.isEmpty else { return }
        let records = progress.pending
        progress.pending = []
        await run.context.publisher.publish(records)
    }
}

extension AdapterOutput {
    /// The message's `type`.
    var typeName: String {
        switch self {
        case .hello: "hello"
        case .device: "device"
        case .quantity: "quantity"
        case .correlation: "correlation"
        case .heartbeats: "heartbeats"
        case .checkpoint: "checkpoint"
        case .log: "log"
        case .status: "status"
        }
    }

    /// A reading's own identifier.
    var readingID: String? {
        switch self {
        case .quantity(let reading): reading.id
        case .correlation(let reading): reading.id
        case .heartbeats(let reading): reading.id
        default: nil
        }
    }

    /// A reading's device's id.
    var deviceID: String? {
        switch self {
        case .quantity(let reading): reading.device
        case .correlation(let reading): reading.device
        case .heartbeats(let reading): reading.device
        default: nil
        }
    }
}

extension JSONValue {
    /// The value as compact JSON with its keys sorted: one text for one value, so that a
    /// checkpoint committed is recognised as the one published.
    var canonicalBytes: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map(Array.init) ?? []
    }
}

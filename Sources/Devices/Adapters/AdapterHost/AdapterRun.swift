public import GatewayRuntime
public import HealthModel
import HealthStore
public import SampleBus
import Dispatch
import FoundationEssentials
public import HealthgateAdapter
public import LinuxSystem
import Synchronization

/// One run of an adapter: started, spoken with until it exits or the gateway stops it, reaped.
///
/// Reading is the flow control: the next chunk of the adapter's stdout is read only once the
/// records of the last one are on the bus (``SamplePublisher`` returns when every sink's queue
/// took them), so an adapter that writes faster than the store takes waits in its write, and
/// nothing piles up here. Readings are published with the checkpoint that follows them, which
/// the store commits in the same transaction; a checkpoint is acknowledged to the adapter once
/// the store has it on stable storage.
///
/// Stopping (the task is cancelled): `stop`, the adapter's stdin closed, what it still writes
/// read and published, SIGTERM after the stop timeout, SIGKILL 2 s later.
public struct AdapterRun: Sendable {
    /// How a run ended.
    public struct Outcome: Hashable, Sendable {
        public var termination: ChildProcess.Termination
        /// The protocol error that made the gateway stop the adapter, if one did.
        public var protocolError: String?
    }

    /// The checkpoints' namespace; the key is the source's name.
    public static let checkpointNamespace = "exec"
    /// How often the committed checkpoint is looked at while one waits for its acknowledgement.
    static let acknowledgementPoll = Duration.milliseconds(250)
    /// The most records published at once.
    static let batchLimit = 512
    /// The longest stderr line logged; the rest is cut.
    static let stderrLineLimit = 4096

    /// What happened in a run, line by line: for `healthgate adapter check`.
    public enum Event: Sendable {
        /// Line `line` held this message.
        case message(line: Int, AdapterOutput)
        /// The reading on line `line` was refused.
        case refused(line: Int, id: String?, reason: String)
        /// Line `line` was no message (or too long).
        case malformed(line: Int, reason: String)
        /// A checkpoint with this state was acknowledged.
        case acknowledged(JSONValue)
    }

    let settings: AdapterSettings
    let name: String
    let gateway: String
    let ids: SampleIDGenerator
    let context: SourceContext
    /// Called with every event, on the run's tasks; nil: none.
    let observer: (@Sendable (Event) -> Void)?
    /// Decides, before the checks, that a reading is refused anyway (the check's deliberate
    /// refusal): the reason, or nil to go on.
    let veto: (@Sendable (_ line: Int, AdapterOutput) -> String?)?

    public init(
        settings: AdapterSettings, name: String, gateway: String, ids: SampleIDGenerator, context: SourceContext,
        observer: (@Sendable (Event) -> Void)? = nil, veto: (@Sendable (_ line: Int, AdapterOutput) -> String?)? = nil
    ) {
        self.settings = settings
        self.name = name
        self.gateway = gateway
        self.ids = ids
        self.context = context
        self.observer = observer
        self.veto = veto
    }

    /// Runs the adapter once.
    /// - Throws: ``ExecStartError`` when it cannot be started; a checkpoint read's error.
    public func run() async throws -> Outcome {
        // The committed checkpoint, not one still in a sink's batch window: the adapter may act on
        // it as on an acknowledgement (erase what it covers).
        let checkpoint = try await context.checkpoints.committedCheckpoint(namespace: Self.checkpointNamespace, key: name)
        let resumeState = checkpoint.flatMap { try? ConfigurationJSONParser.parse($0.payload) }
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: settings.executable, arguments: settings.arguments, environment: settings.environment,
                directory: settings.directory, user: settings.user)
        } catch {
            throw ExecStartError(command: settings.arguments.joined(separator: " "), errno: error)
        }
        context.logger.info("started the adapter \(settings.arguments.joined(separator: " ")) (pid \(process.pid))")
        context.status.setDetail("pid", String(process.pid))
        let channel = AdapterInput(process: process)
        channel.send(GatewayHello(
            gateway: gateway, name: name, config: settings.adapterConfiguration, checkpoint: resumeState, maxLineBytes: settings.maxLineBytes))
        let stopper = AdapterStopper(process: process, input: channel, timeout: settings.stopTimeout, logger: context.logger)
        let acknowledger = CheckpointAcknowledger()
        let reader = AdapterOutputReader(run: self, process: process, input: channel, stopper: stopper, acknowledger: acknowledger)
        let protocolError = await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.logErrors(of: process) }
                group.addTask { await self.watchHello(reader: reader, stopper: stopper, input: channel) }
                group.addTask { await self.acknowledge(acknowledger, input: channel) }
                let error = await reader.readUntilEnd()
                group.cancelAll()
                return error
            }
        } onCancel: {
            stopper.stop(reason: nil)
        }
        let termination = await process.exit()
        stopper.reaped()
        context.status.setDetail("pid", nil)
        let level: LogLevel = Task.isCancelled ? .info : .warning
        // SIGSYS: a system call the gateway's seccomp filter forbids, which its child inherits
        // (the packaged unit's SystemCallFilter=; plugins/ExecAdapter/README.md says what to relax).
        let hint = termination == .signalled(31)
            ? ": it made a system call the gateway's sandbox forbids (the unit's SystemCallFilter=; plugins/ExecAdapter/README.md, \"Under the packaged service\")"
            : ""
        context.logger.log(level, "the adapter \(termination)\(hint)")
        return Outcome(termination: termination, protocolError: protocolError ?? reader.helloFailure)
    }

    /// Logs the adapter's stderr, a line at a time, until it ends.
    private func logErrors(of process: ChildProcess) async {
        let queue = DispatchQueue(label: "healthgate.exec.stderr")
        var buffer: [UInt8] = []
        func emit(_ line: ArraySlice<UInt8>) {
            let cut = line.prefix(Self.stderrLineLimit)
            let text = String(decoding: cut, as: UTF8.self)
            guard !text.isEmpty else { return }
            context.logger.info("adapter stderr: \(text)\(line.count > cut.count ? " […]" : "")")
        }
        while true {
            guard let chunk = try? await ChildProcess.read(process.errors, maximum: 16_384, on: queue), !chunk.isEmpty else { break }
            buffer += chunk
            while let newline = buffer.firstIndex(of: 0x0A) {
                emit(buffer[..<newline])
                buffer.removeSubrange(...newline)
            }
            if buffer.count > Self.stderrLineLimit {
                emit(buffer[...])
                buffer.removeAll()
            }
        }
        emit(buffer[...])
    }

    /// Stops the adapter when it has not said hello within the timeout.
    private func watchHello(reader: AdapterOutputReader, stopper: AdapterStopper, input: AdapterInput) async {
        do { try await context.clock.sleep(for: settings.helloTimeout) } catch { return }
        guard !reader.helloSeen else { return }
        let reason = "no hello from the adapter within \(settings.helloTimeout.seconds) s"
        reader.helloFailure = reason
        context.logger.error(reason)
        input.send(ErrorMessage(reason: reason, fatal: true))
        stopper.stop(reason: reason)
    }

    /// Acknowledges each published checkpoint once the store committed it.
    private func acknowledge(_ acknowledger: CheckpointAcknowledger, input: AdapterInput) async {
        var warned = false
        while !Task.isCancelled {
            do { try await context.clock.sleep(for: Self.acknowledgementPoll) } catch { return }
            guard acknowledger.isWaiting else { continue }
            if let ledger = context.checkpoints as? CheckpointLedger, !ledger.isDurable {
                if !warned {
                    context.logger.warning("no sink stores checkpoints: the adapter's checkpoints are never acknowledged (configure the sqlite sink)")
                    warned = true
                }
                continue
            }
            do {
                guard let committed = try await context.checkpoints.committedCheckpoint(namespace: Self.checkpointNamespace, key: name),
                    let state = acknowledger.committed(committed.payload)
                else { continue }
                input.send(AckMessage(state: state))
                observer?(.acknowledged(state))
            } catch {
                context.logger.warning("cannot read the committed checkpoint: \(error); the acknowledgement waits")
            }
        }
    }
}

/// The adapter could not be started.
public struct ExecStartError: Error, Hashable, Sendable, CustomStringConvertible {
    public var command: String
    public var errno: Errno
    public var description: String { "cannot start the adapter \(command): \(errno)" }
}

/// The checkpoints published and not yet acknowledged, in order.
final class CheckpointAcknowledger: Sendable {
    private let unacknowledged = Mutex<[(state: JSONValue, payload: [UInt8])]>([])

    /// Notes a published checkpoint.
    func published(state: JSONValue, payload: [UInt8]) {
        unacknowledged.withLock { $0.append((state, payload)) }
    }

    var isWaiting: Bool { unacknowledged.withLock { !$0.isEmpty } }

    /// The state to acknowledge now that `payload` is committed (it and every one before it are
    /// done), or nil when it is none of those waiting.
    func committed(_ payload: Data) -> JSONValue? {
        let bytes = Array(payload)
        return unacknowledged.withLock { waiting in
            guard let index = waiting.lastIndex(where: { $0.payload == bytes }) else { return nil }
            let state = waiting[index].state
            waiting.removeFirst(index + 1)
            return state
        }
    }
}

/// What the gateway writes on the adapter's stdin: whole lines, never blocking. A line the
/// socket cannot take now waits in a buffer of at most ``limit`` bytes, written before the next
/// line; past it (an adapter that never reads its stdin) lines are dropped and counted.
final class AdapterInput: Sendable {
    static let limit = 1 << 20
    private let process: ChildProcess
    private struct State {
        var waiting: [UInt8] = []
        var dropped = 0
        var closed = false
    }
    private let state = Mutex(State())

    init(process: ChildProcess) { self.process = process }

    func send(_ message: some AdapterMessageBody) {
        let line = message.line
        state.withLock { (state: inout State) in
            guard !state.closed else { return }
            if state.waiting.count + line.count > Self.limit {
                state.dropped += 1
            } else {
                state.waiting += line
            }
            while !state.waiting.isEmpty {
                do throws(Errno) {
                    let sent = try process.writeSome(state.waiting)
                    state.waiting.removeFirst(sent)
                } catch {
                    // EAGAIN: it waits for the next line; EPIPE: the adapter closed its stdin.
                    if error != .wouldBlock { state.waiting.removeAll() }
                    return
                }
            }
        }
    }

    /// Lines dropped because the adapter did not read its stdin.
    var dropped: Int { state.withLock { $0.dropped } }

    /// Writes what waits, then ends the adapter's stdin.
    func close() {
        state.withLock { (state: inout State) in
            if !state.waiting.isEmpty { _ = try? process.writeSome(state.waiting) }
            state.closed = true
        }
        process.closeInput()
    }
}

/// Stops the adapter once: `stop`, its stdin closed, SIGTERM after the timeout, SIGKILL 2 s later
/// (timers on a queue, so a cancelled task still ends it).
final class AdapterStopper: Sendable {
    private let process: ChildProcess
    private let input: AdapterInput
    private let timeout: Duration
    private let logger: Logger
    private let state = Mutex<(stopping: Bool, reaped: Bool)>((false, false))
    private let queue = DispatchQueue(label: "healthgate.exec.stop")

    init(process: ChildProcess, input: AdapterInput, timeout: Duration, logger: Logger) {
        self.process = process
        self.input = input
        self.timeout = timeout
        self.logger = logger
    }

    /// Begins the stop (later calls do nothing). `reason`: the protocol error that ends the
    /// run; nil for the gateway's own stop.
    func stop(reason: String?) {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        input.send(StopMessage())
        input.close()
        let seconds = timeout.seconds
        queue.asyncAfter(deadline: .now() + seconds) { [self] in
            guard !state.withLock({ $0.reaped }) else { return }
            logger.warning("the adapter did not exit within \(seconds) s of stop: SIGTERM")
            process.signal(ChildProcess.terminate)
            queue.asyncAfter(deadline: .now() + 2) { [self] in
                guard !state.withLock({ $0.reaped }) else { return }
                logger.warning("the adapter did not exit within 2 s of SIGTERM: SIGKILL")
                process.signal(ChildProcess.kill)
            }
        }
    }

    /// The adapter was reaped: no signal is sent any more.
    func reaped() { state.withLock { $0.reaped = true } }
}

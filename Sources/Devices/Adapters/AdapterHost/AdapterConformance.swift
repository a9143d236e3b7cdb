public import GatewayRuntime
import FoundationEssentials
import HealthModel
import LinuxSystem
public import HealthStore
import HealthgateAdapter
import SampleBus
import Synchronization

/// `healthgate adapter check`: an adapter run three times against a private store, through the
/// gateway's own ``AdapterRun``, and judged check by check (docs/adapter-protocol.md).
///
/// 1. As a gateway starts it the first time: no checkpoint. Its readings and checkpoints go into
///    the store; checkpoints are acknowledged once committed.
/// 2. Restarted as after a lost store: no checkpoint again, and its checkpoints are not kept. Its
///    first reading is refused on purpose. A reading sent in both runs must have the same `id`,
///    and an `id` the same reading.
/// 3. Restarted with the checkpoint the first run committed: it must send nothing it covers.
///
/// A run ends once the adapter has been quiet for ``quiet`` with its checkpoints acknowledged, or
/// after ``longest``; then the gateway's stop: the adapter must exit with status 0 before its
/// stop timeout.
public struct AdapterConformance: Sendable {
    /// One check's verdict.
    public struct Check: Sendable, Hashable {
        public var name: String
        public var passed: Bool
        /// What was found: the numbers, or the specific reason it failed.
        public var detail: String
    }

    let settings: AdapterSettings
    let store: HealthStore
    let logger: Logger
    /// How long the adapter may be quiet before a run is stopped.
    let quiet: Duration
    /// The longest a run lasts.
    let longest: Duration

    /// The checks, in the order they are reported; a run whose handshake fails reports only the first.
    public enum Kind: String, CaseIterable, Sendable {
        case handshake = "handshake"
        case valid = "messages valid against the schema"
        case accepted = "units and types accepted"
        case stable = "identifiers stable across a restart"
        case resumes = "resumes from its checkpoint"
        case refusal = "goes on after a refused reading"
        case exits = "clean exit on stop"
    }

    /// The checks' names, in order.
    public static var checkNames: [String] { Kind.allCases.map(\.rawValue) }

    /// The source name the runs use (the sync identifiers' prefix).
    public static let sourceName = "adapter-check"

    /// A check of the adapter `settings` start, against `store` (a private, empty one).
    public init(settings: AdapterSettings, store: HealthStore, logger: Logger, quiet: Duration = .seconds(1), longest: Duration = .seconds(15)) {
        self.settings = settings
        self.store = store
        self.logger = logger
        self.quiet = quiet
        self.longest = longest
    }

    /// What one run saw.
    struct RunRecord {
        var events: [AdapterRun.Event] = []
        var outcome: AdapterRun.Outcome?
        var startError: String?
        var summary = WriteSummary()
        /// Whether the gateway's stop ended it (not the adapter on its own, nor a protocol error).
        var stoppedByGateway = false

        var messages: [(line: Int, message: AdapterOutput)] {
            events.compactMap { if case .message(let line, let message) = $0 { (line, message) } else { nil } }
        }
        var readings: [(line: Int, message: AdapterOutput)] {
            messages.filter { $0.message.isReading }
        }
        var refusals: [(line: Int, id: String?, reason: String)] {
            events.compactMap { if case .refused(let line, let id, let reason) = $0 { (line, id, reason) } else { nil } }
        }
        var malformed: [(line: Int, reason: String)] {
            events.compactMap { if case .malformed(let line, let reason) = $0 { (line, reason) } else { nil } }
        }
        var acknowledged: [JSONValue] {
            events.compactMap { if case .acknowledged(let state) = $0 { state } else { nil } }
        }
        var checkpoints: [(line: Int, state: JSONValue)] {
            messages.compactMap { if case .checkpoint(let checkpoint) = $0.message { ($0.line, checkpoint.state) } else { nil } }
        }
    }

    /// Runs the three runs and judges them.
    public func run() async -> [Check] {
        let first = await runOnce(durable: true, keepCheckpoints: true, refuseFirst: false)
        var checks = [handshake(first)]
        guard first.startError == nil, checks[0].passed else { return checks }
        let second = await runOnce(durable: false, keepCheckpoints: false, refuseFirst: true)
        let committed = try? await store.checkpoint(namespace: AdapterRun.checkpointNamespace, key: Self.sourceName)
        let third = await runOnce(durable: true, keepCheckpoints: true, refuseFirst: false)
        let runs = [first, second, third]
        checks.append(valid(runs))
        checks.append(accepted(runs))
        checks.append(stable(first, second, third))
        checks.append(resumes(first, third, committed: committed))
        checks.append(refusal(second))
        checks.append(exits(runs))
        return checks
    }

    private func runOnce(durable: Bool, keepCheckpoints: Bool, refuseFirst: Bool) async -> RunRecord {
        let record = Mutex(RunRecord())
        let lastEvent = Mutex(ContinuousClock.now)
        let bus = SampleBus(
            sinks: [(name: "check-store", queue: QueueConfiguration(), accepts: { _ in true }, status: nil)],
            storesCheckpoints: [keepCheckpoints], checkpoints: CheckpointLedger(durable: durable ? store : nil))
        let board = StatusBoard()
        let status = board.register(name: Self.sourceName, kind: "exec", role: .source)
        let clock = SystemClock()
        let context = SourceContext(
            publisher: SamplePublisher(bus: bus, status: status), logger: logger, clock: clock, status: status)
        let refusedOne = Mutex(false)
        let adapterRun = AdapterRun(
            settings: settings, name: Self.sourceName, gateway: "healthgate adapter check", ids: SampleIDGenerator(), context: context,
            observer: { event in
                record.withLock { $0.events.append(event) }
                lastEvent.withLock { $0 = .now }
            },
            veto: { _, _ in
                guard refuseFirst else { return nil }
                return refusedOne.withLock { done in
                    defer { done = true }
                    return done ? nil : "refused on purpose by healthgate adapter check, to see what the adapter does with a refusal"
                }
            })
        let store = self.store
        guard let inbox = bus.subscription(named: "check-store")?.inbox else { return RunRecord() }
        let sink = Task {
            var summary = WriteSummary()
            while let batch = await inbox.nextBatch(maxCount: 512) {
                if let written = try? await store.write(batch.records, checkpoints: batch.checkpoints) {
                    summary.inserted += written.inserted
                    summary.replaced += written.replaced
                    summary.ignored += written.ignored
                    summary.refused += written.refused
                    summary.refusedIdentifiers += written.refusedIdentifiers
                }
            }
            return summary
        }
        let started = ContinuousClock.now
        let running = Task { try await adapterRun.run() }
        let finished = Mutex(false)
        let watcher = Task {
            _ = await running.result
            finished.withLock { $0 = true }
        }
        while !finished.withLock({ $0 }) {
            try? await Task.sleep(for: .milliseconds(100))
            let current = record.withLock { $0 }
            let caughtUp = !durable || !keepCheckpoints || current.checkpoints.last.map { latest in current.acknowledged.last == latest.state } ?? true
            let quietFor = ContinuousClock.now - lastEvent.withLock { $0 }
            if ContinuousClock.now - started >= longest || (quietFor >= quiet && caughtUp && !current.messages.isEmpty)
                || (quietFor >= longest / 3 && current.messages.isEmpty)
            {
                break
            }
        }
        let stoppedByGateway = !finished.withLock { $0 }
        running.cancel()
        let result = await running.result
        await watcher.value
        bus.finish()
        let summary = await sink.value
        return record.withLock { record in
            record.summary = summary
            record.stoppedByGateway = stoppedByGateway
            switch result {
            case .success(let outcome): record.outcome = outcome
            case .failure(let error): record.startError = "\(error)"
            }
            return record
        }
    }

    // MARK: The checks

    private func handshake(_ run: RunRecord) -> Check {
        let name = Kind.handshake.rawValue
        if let error = run.startError { return Check(name: name, passed: false, detail: error) }
        guard let first = run.messages.first else {
            return Check(name: name, passed: false, detail: run.outcome?.protocolError ?? "the adapter wrote no message (it \(run.outcome.map { "\($0.termination)" } ?? "ended"))")
        }
        guard case .hello(let hello) = first.message, run.outcome?.protocolError == nil else {
            return Check(name: name, passed: false, detail: run.outcome?.protocolError ?? "the first message is no hello")
        }
        return Check(name: name, passed: true, detail: "\(hello.adapter)\(hello.version.map { " \($0)" } ?? ""), protocol \(hello.protocolVersion)")
    }

    private func valid(_ runs: [RunRecord]) -> Check {
        let malformed = runs.flatMap(\.malformed)
        let lines = runs.map { $0.messages.count + $0.malformed.count }.reduce(0, +)
        guard malformed.isEmpty else {
            return Check(
                name: Kind.valid.rawValue, passed: false,
                detail: "\(malformed.count) of \(lines) lines are no message: " + malformed.prefix(3).map { "line \($0.line): \($0.reason)" }.joined(separator: "; "))
        }
        return Check(name: Kind.valid.rawValue, passed: true, detail: "\(lines) lines in 3 runs, every one a valid message")
    }

    private func accepted(_ runs: [RunRecord]) -> Check {
        let name = Kind.accepted.rawValue
        // The second run's first refusal is the check's own.
        var refusals = runs[0].refusals + runs[2].refusals
        refusals += runs[1].refusals.filter { !$0.reason.hasPrefix("refused on purpose") }
        let readings = runs.map(\.readings.count).reduce(0, +)
        guard readings > 0 else { return Check(name: name, passed: false, detail: "the adapter sent no reading in \(longest.seconds) s") }
        guard refusals.isEmpty else {
            return Check(
                name: name, passed: false,
                detail: "\(refusals.count) of \(readings) readings refused: "
                    + refusals.prefix(3).map { "line \($0.line)\($0.id.map { " (\($0))" } ?? ""): \($0.reason)" }.joined(separator: "; "))
        }
        return Check(name: name, passed: true, detail: "\(readings) readings in 3 runs, every one accepted")
    }

    private func stable(_ first: RunRecord, _ second: RunRecord, _ third: RunRecord) -> Check {
        let name = Kind.stable.rawValue
        let refusedByStore = first.summary.refused + second.summary.refused + third.summary.refused
        if refusedByStore > 0 {
            let ids = (first.summary.refusedIdentifiers + second.summary.refusedIdentifiers + third.summary.refusedIdentifiers).prefix(3)
            return Check(name: name, passed: false, detail: "the store refused \(refusedByStore) readings: an id sent again with another value (\(ids.joined(separator: ", ")))")
        }
        var firstByContent: [String: String?] = [:]
        var firstByID: [String: String] = [:]
        for reading in first.readings {
            firstByContent[reading.message.content] = reading.message.readingID
            if let id = reading.message.readingID { firstByID[id] = reading.message.content }
        }
        var compared = 0
        for reading in second.readings {
            let content = reading.message.content
            if let earlier = firstByContent[content] {
                compared += 1
                guard let earlier, let id = reading.message.readingID else {
                    return Check(name: name, passed: false, detail: "a reading sent again after the restart has no id, so it is stored twice: \(content)")
                }
                guard earlier == id else {
                    return Check(name: name, passed: false, detail: "unstable identifier: the same reading had id \"\(earlier)\" in the first run and \"\(id)\" after the restart (\(content))")
                }
            }
            if let id = reading.message.readingID, let earlier = firstByID[id], earlier != content {
                return Check(name: name, passed: false, detail: "the id \"\(id)\" named \(earlier) in the first run and \(content) after the restart")
            }
        }
        guard compared > 0 else {
            return Check(name: name, passed: true, detail: "no reading was sent in both runs (a live stream): nothing to compare")
        }
        return Check(
            name: name, passed: true,
            detail: "\(compared) readings sent again after the restart, each with its id; stored once (the store took \(first.summary.inserted + second.summary.inserted + third.summary.inserted), ignored \(first.summary.ignored + second.summary.ignored + third.summary.ignored) sent again)")
    }

    private func resumes(_ first: RunRecord, _ third: RunRecord, committed: SourceCheckpoint?) -> Check {
        let name = Kind.resumes.rawValue
        guard let last = first.checkpoints.last else {
            return Check(name: name, passed: true, detail: "the adapter sends no checkpoint: it sends everything again after each restart (stored once thanks to its ids)")
        }
        guard let committed, let state = try? ConfigurationJSONParser.parse(committed.payload) else {
            return Check(name: name, passed: false, detail: "its checkpoint (line \(last.line)) was never committed")
        }
        guard first.acknowledged.contains(state) else {
            return Check(name: name, passed: false, detail: "its committed checkpoint was not acknowledged within the run")
        }
        guard let line = first.checkpoints.last(where: { $0.state == state })?.line else {
            return Check(name: name, passed: false, detail: "the committed checkpoint is none the first run sent")
        }
        let covered = Set(first.readings.filter { $0.line < line }.map(\.message.content))
        let coveredIDs = Set(first.readings.filter { $0.line < line }.compactMap(\.message.readingID))
        let again = third.readings.filter { covered.contains($0.message.content) || $0.message.readingID.map(coveredIDs.contains) == true }
        guard again.isEmpty else {
            return Check(
                name: name, passed: false,
                detail: "ignores its checkpoint: given \(state.compactText), it sent again \(again.count) of the \(covered.count) readings the checkpoint covers")
        }
        return Check(name: name, passed: true, detail: "given \(state.compactText), it sent none of the \(covered.count) readings it covers (\(third.readings.count) new)")
    }

    private func refusal(_ second: RunRecord) -> Check {
        let name = Kind.refusal.rawValue
        guard let refused = second.refusals.first(where: { $0.reason.hasPrefix("refused on purpose") }) else {
            return Check(name: name, passed: true, detail: "the restarted adapter sent no reading to refuse")
        }
        guard second.stoppedByGateway else {
            return Check(name: name, passed: false, detail: "after its reading on line \(refused.line) was refused it \(second.outcome.map { "\($0.termination)" } ?? "ended") before stop")
        }
        let after = second.messages.filter { $0.line > refused.line }
        let logged = after.compactMap { if case .log(let line) = $0.message { line.message } else { nil } }.first
        return Check(
            name: name, passed: true,
            detail: "it kept running: \(after.count) messages after the refusal" + (logged.map { "; it logged \"\($0)\"" } ?? ""))
    }

    private func exits(_ runs: [RunRecord]) -> Check {
        let name = Kind.exits.rawValue
        for (index, run) in runs.enumerated() {
            guard let outcome = run.outcome else { continue }
            if let error = outcome.protocolError {
                return Check(name: name, passed: false, detail: "run \(index + 1): the gateway stopped it: \(error)")
            }
            guard run.stoppedByGateway else {
                return Check(name: name, passed: false, detail: "run \(index + 1): it \(outcome.termination) before stop")
            }
            guard outcome.termination == .exited(0) else {
                return Check(
                    name: name, passed: false,
                    detail: "run \(index + 1): after stop it \(outcome.termination)" + (outcome.termination == .signalled(15) || outcome.termination == .signalled(9) ? " (it did not exit within \(settings.stopTimeout.seconds) s)" : ""))
            }
        }
        return Check(name: name, passed: true, detail: "3 runs, each ended with status 0 after stop")
    }
}

extension AdapterOutput {
    /// Whether the message is a reading.
    var isReading: Bool {
        switch self {
        case .quantity, .correlation, .heartbeats: true
        default: false
        }
    }

    /// The reading without its identity: what it says, to compare two runs.
    var content: String {
        switch self {
        case .quantity(var reading):
            reading.id = nil
            reading.version = nil
            return String(decoding: reading.line.dropLast(), as: UTF8.self)
        case .correlation(var reading):
            reading.id = nil
            reading.version = nil
            return String(decoding: reading.line.dropLast(), as: UTF8.self)
        case .heartbeats(var reading):
            reading.id = nil
            reading.version = nil
            return String(decoding: reading.line.dropLast(), as: UTF8.self)
        default:
            return String(decoding: line.dropLast(), as: UTF8.self)
        }
    }
}

extension JSONValue {
    /// The value as compact JSON text.
    var compactText: String { String(decoding: canonicalBytes, as: UTF8.self) }
}

public import HealthgateAdapter

/// What the adapter says about what it reads: bytes from the scale in, protocol messages out.
///
/// A pure state machine beside its driver (the executable's reader, which owns the file
/// descriptor and the clock): bytes and instants in, the messages to send out, in the order
/// to send them. Each line is cut (``LineSplitter``), decoded (``WeighingDecoder``) and becomes
/// a reading, a log line or nothing; for a regular file a checkpoint follows the readings it
/// covers (``CheckpointPacer``).
public struct ScaleSession: Sendable {
    /// What the path is, which decides whether there are checkpoints.
    public enum Input: Sendable, Hashable {
        /// A regular file, read from `offset` (0, or the resumed checkpoint's): checkpoints.
        case file(offset: Int)
        /// A tty or a FIFO: what was read cannot be read again, so no checkpoint.
        case stream
    }

    /// How many lines of each outcome the session has seen.
    public struct Counts: Sendable, Hashable {
        /// Stable weighings sent as readings.
        public var readings = 0
        /// Unstable weighings skipped.
        public var unstable = 0
        /// Lines reported as warnings (overloads, no load, lines that are no weighing).
        public var warnings = 0

        public init(readings: Int = 0, unstable: Int = 0, warnings: Int = 0) {
            self.readings = readings
            self.unstable = unstable
            self.warnings = warnings
        }
    }

    /// The scale's configuration.
    public let configuration: LineScaleConfiguration
    /// What is read.
    public let input: Input
    /// The lines seen so far, by outcome.
    public private(set) var counts = Counts()
    private var splitter: LineSplitter
    /// Nil for a stream: it has no checkpoints.
    private var pacer: CheckpointPacer?

    /// A session reading `input` for the scale `configuration` describes, with at least
    /// `checkpointInterval` between two checkpoints.
    public init(configuration: LineScaleConfiguration, input: Input, checkpointInterval: Duration = .milliseconds(500)) {
        self.configuration = configuration
        self.input = input
        switch input {
        case .file(let offset):
            splitter = LineSplitter(offset: offset)
            pacer = CheckpointPacer(offset: offset, interval: checkpointInterval)
        case .stream:
            splitter = LineSplitter()
            pacer = nil
        }
    }

    /// The offset just after the last complete line read.
    public var consumed: Int { splitter.consumed }

    /// Whether lines were consumed that no checkpoint sent yet covers.
    public var isCheckpointPending: Bool { pacer?.isPending(consumed: splitter.consumed) ?? false }

    /// The first messages, before any reading: the scale as a device, and the status.
    public func opening() -> [AdapterOutput] {
        [
            .device(
                DeviceMessage(
                    id: configuration.serial, manufacturer: "Acme Scales", model: configuration.model, serialNumber: configuration.serial)),
            .status(StatusMessage(state: Self.state("reading", configuration.path))),
        ]
    }

    /// The messages for `bytes`, the next ones read at `now`: a reading, a log line or nothing
    /// for each line they complete, then a checkpoint when one is due.
    public mutating func receive(_ bytes: some Collection<UInt8>, at now: ContinuousClock.Instant) -> [AdapterOutput] {
        var messages = splitter.append(bytes).compactMap { message(for: $0) }
        messages += idle(at: now)
        return messages
    }

    /// The checkpoint due at `now`, when one is: called when the reader finds nothing new.
    public mutating func idle(at now: ContinuousClock.Instant) -> [AdapterOutput] {
        guard let offset = pacer?.checkpoint(consumed: splitter.consumed, at: now) else { return [] }
        return [.checkpoint(CheckpointMessage(state: LineScaleCheckpoint(offset: offset).state))]
    }

    /// The messages at the end of a file not followed (`follow` false): a warning when its last
    /// line has no newline (it is left unread: it may still be being written), and the status.
    public mutating func endOfFile() -> [AdapterOutput] {
        var messages: [AdapterOutput] = []
        if splitter.hasPartialLine {
            let line = WeighingDecoder.printable(splitter.partialLine)
            messages.append(warning("the last line has no newline and is left unread: \"\(line)\"", at: splitter.consumed))
        }
        messages.append(
            .status(
                StatusMessage(
                    state: Self.state("read to its end:", configuration.path),
                    detail: "follow is false: nothing more is read until the adapter is started again")))
        return messages
    }

    /// Starts again at offset 0: the file is now `size` bytes, shorter than what was read
    /// (truncated, or replaced by a shorter one).
    public mutating func truncated(to size: Int) -> [AdapterOutput] {
        let message = warning(
            "the file shrank to \(size) bytes, below the \(splitter.consumed) already read: reading it again from its start", at: nil)
        splitter.reset(offset: 0)
        pacer?.reset(offset: 0)
        return [message]
    }

    // MARK: One line

    private mutating func message(for line: LineSplitter.Line) -> AdapterOutput? {
        guard !line.truncated else {
            let beginning = WeighingDecoder.printable(line.bytes.prefix(64))
            return warning("a line longer than \(splitter.maxLineBytes) bytes, skipped: \"\(beginning)…\"", at: line.start)
        }
        let weighing: Weighing
        do {
            weighing = try WeighingDecoder.decode(line.bytes)
        } catch {
            if error.code == .blank { return nil }
            return warning(error.description, at: line.start)
        }
        switch weighing.stability {
        case .unstable:
            counts.unstable += 1
            let text = "skipped an unstable weighing: \"\(Self.shown(line))\""
            return .log(LogMessage(text, level: .debug, device: configuration.serial))
        case .stable:
            guard weighing.value > 0 else {
                let weight = "\(weighing.value) \(weighing.unit.rawValue)"
                let text = "a stable weighing of no load (\(weight)) is no body mass, skipped: \"\(Self.shown(line))\""
                return warning(text, at: line.start)
            }
            counts.readings += 1
            return .quantity(weighing.quantity(serial: configuration.serial))
        }
    }

    private mutating func warning(_ text: String, at offset: Int?) -> AdapterOutput {
        counts.warnings += 1
        // A file's byte offset finds the line; a serial line's would point nowhere.
        let place = if case .file = input, let offset { " (at byte \(offset) of \(configuration.path))" } else { "" }
        return .log(LogMessage(text + place, level: .warning, device: configuration.serial))
    }

    /// A line as a log message quotes it: printable, without a CRLF's CR.
    private static func shown(_ line: LineSplitter.Line) -> String {
        WeighingDecoder.printable(line.bytes.last == ASCII.carriageReturn ? line.bytes.dropLast() : line.bytes[...])
    }

    /// A status's state, within the protocol's 128 characters.
    private static func state(_ words: String, _ path: String) -> String {
        String("\(words) \(path)".prefix(128))
    }
}

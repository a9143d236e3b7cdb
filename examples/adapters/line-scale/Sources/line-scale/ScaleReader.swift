import Dispatch
import HealthgateAdapter
import LineScaleKit
#if canImport(Glibc)
import Glibc
#endif

/// Reads the scale's port or file on a queue of its own and sends what it reads: the driver of
/// ``ScaleSession``, which owns the file descriptor and the clock.
///
/// Its reads block (a tty or a FIFO waits for the scale; a followed file is looked at again
/// every ``pollInterval``), so it runs on a dispatch queue of its own, never on the cooperative
/// pool. Nothing cancels a blocked read: the adapter ends by exiting the process.
struct ScaleReader: Sendable {
    let configuration: LineScaleConfiguration
    /// The checkpoint's state in the gateway's hello; nil: none.
    let checkpoint: JSONValue?
    let outbox: MessageOutbox
    /// How often a followed file is looked at for new lines, and the shortest time between two
    /// checkpoints.
    let pollInterval: Duration = .milliseconds(500)

    /// Starts reading on the reader's queue; `ended` is called there when reading ends: with
    /// nil at the end of a file not followed, or with the reason it cannot go on.
    func start(ended: @escaping @Sendable (ScaleInputError?) -> Void) {
        DispatchQueue(label: "line-scale.reader").async {
            do throws(ScaleInputError) {
                try read()
                ended(nil)
            } catch {
                ended(error)
            }
        }
    }

    private func read() throws(ScaleInputError) {
        let input = try ScaleInput.open(configuration.path)
        var notes: [AdapterOutput] = []
        var session: ScaleSession
        switch input.kind {
        case .regularFile:
            let resume = try resumePoint(input, notes: &notes)
            try input.seek(to: resume.offset)
            session = ScaleSession(configuration: configuration, input: .file(offset: resume.offset), checkpointInterval: pollInterval)
        case .fifo, .terminal:
            if checkpoint != nil {
                notes.append(note(.info, "\(configuration.path) is a serial line, which has no checkpoint: the one given is ignored"))
            }
            session = ScaleSession(configuration: configuration, input: .stream)
        }
        guard send(session.opening() + notes) else { return }

        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = try input.read(into: &buffer)
            if count > 0 {
                guard send(session.receive(buffer[..<count], at: .now)) else { return }
                continue
            }
            // The end of what there is to read.
            guard input.kind == .regularFile else { throw ScaleInputError(code: .lineClosed, path: configuration.path) }
            guard configuration.follow else {
                try finish(&session)
                return
            }
            guard send(session.idle(at: .now)) else { return }
            let size = try input.size()
            if size < (try input.position()) {
                guard send(session.truncated(to: size)) else { return }
                try input.seek(to: 0)
                continue
            }
            pause(pollInterval)
        }
    }

    /// The end of a file not followed: its last checkpoint (as soon as the pacing allows), then
    /// the end's messages; reading stops there.
    private func finish(_ session: inout ScaleSession) throws(ScaleInputError) {
        while session.isCheckpointPending {
            guard send(session.idle(at: .now)) else { return }
            if session.isCheckpointPending { pause(pollInterval) }
        }
        send(session.endOfFile())
    }

    /// Where to start in the file: the checkpoint's offset if the file still holds it.
    private func resumePoint(_ input: ScaleInput, notes: inout [AdapterOutput]) throws(ScaleInputError) -> ResumePoint {
        let resumed: LineScaleCheckpoint?
        do {
            resumed = try LineScaleCheckpoint.resuming(from: checkpoint)
        } catch {
            notes.append(note(.warning, "the checkpoint is none of this adapter's (\(error)): \(configuration.path) is read from its start"))
            return ResumePoint(offset: 0)
        }
        let size = try input.size()
        let offset = resumed?.offset ?? 0
        let before = offset > 0 && offset <= size ? try input.byte(at: offset - 1) : nil
        let point = ResumePoint.resuming(resumed, fileSize: size, byteBeforeOffset: before)
        if let problem = point.problem { notes.append(note(.warning, "\(configuration.path): \(problem)")) }
        return point
    }

    /// Sends `messages`; false when the adapter is stopping or the gateway is gone: reading ends.
    @discardableResult
    private func send(_ messages: [AdapterOutput]) -> Bool {
        guard !messages.isEmpty else { return true }
        do {
            return try outbox.send(messages)
        } catch {
            // stdout is closed: the gateway is gone, and stdin's end will end the adapter.
            return false
        }
    }

    private func note(_ level: LogLevel, _ text: String) -> AdapterOutput {
        .log(LogMessage(text, level: level, device: configuration.serial))
    }

    /// Sleeps `duration` on the reader's thread (nanosleep(2)), which is no thread of the
    /// cooperative pool.
    private func pause(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

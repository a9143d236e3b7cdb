public import Dispatch
import Synchronization

/// Why a byte stream ended.
public enum ByteStreamEnd: Hashable, Sendable, CustomStringConvertible {
    /// The peer hung up: read(2) returned 0 (a hung-up tty, a closed socket) or `EIO` (a pty
    /// whose other side closed; tty_io.c and pty.c). A tty must be set with VMIN ≥ 1 for a 0 to
    /// mean this (``SerialPort`` does): with VMIN 0 and VTIME 0 a tty returns 0 when merely
    /// empty.
    case hangUp
    /// The device was removed (`ENODEV`, `ENXIO`): a USB adapter unplugged.
    case deviceRemoved(Errno)
    /// Another read error.
    case failed(Errno)
    /// The owner closed the stream (``ByteStreamReader/cancel()``, or the consumer went away).
    case closed

    /// Whether the device may come back (reconnect) rather than a local failure.
    public var isDisconnection: Bool {
        switch self {
        case .hangUp, .deviceRemoved: true
        case .failed, .closed: false
        }
    }

    public var description: String {
        switch self {
        case .hangUp: "peer hung up"
        case .deviceRemoved(let errno): "device removed: \(errno)"
        case .failed(let errno): "read failed: \(errno)"
        case .closed: "closed"
        }
    }
}

/// One event of a byte stream: a chunk of bytes, or the end with its reason (always last).
public enum ByteStreamEvent: Hashable, Sendable {
    case bytes([UInt8])
    case end(ByteStreamEnd)
}

/// Reads a non-blocking descriptor with a `DispatchSource` and delivers the bytes as an
/// `AsyncStream`, so no read ever blocks the cooperative pool.
///
/// The reader takes over the descriptor's lifetime: the source's cancel handler closes it
/// (dispatch requires that a descriptor outlive its source), after which writes through the
/// ``FileDescriptor`` throw `EBADF`. The stream yields ``ByteStreamEvent/bytes(_:)`` chunks of at
/// most `chunkSize` bytes, then exactly one ``ByteStreamEvent/end(_:)``.
///
/// Buffer policy: at most `bufferedChunks` chunks wait for the consumer (by default 256 chunks of
/// 4 KiB: 1 MiB, about 90 s of a 115200-baud line); beyond that the oldest are dropped and
/// counted in ``droppedChunks`` (a consumer that falls that far behind a serial line has already
/// lost its timing). The end event is never dropped.
public final class ByteStreamReader: Sendable {
    private struct State {
        var source: ReadinessSource?
        var finished = false
        var dropped = 0
    }

    /// The stream of chunks and the final end event; with a ``Delivery`` handler, only finished
    /// at the end (the handler had the events).
    public let events: AsyncStream<ByteStreamEvent>
    private let continuation: AsyncStream<ByteStreamEvent>.Continuation
    /// Takes each event instead of ``events``: called on the reader's queue for the chunks, and
    /// for the end on the queue or on the thread that cancels. It must return at once.
    public typealias Delivery = @Sendable (ByteStreamEvent) -> Void
    private let delivery: Delivery?
    private let state = Mutex(State())
    private let descriptor: FileDescriptor
    private let chunkSize: Int

    /// Starts reading `descriptor`, which must be non-blocking, on `queue`.
    /// - Parameter closesDescriptor: close the descriptor when the stream ends (the default);
    ///   false leaves it to the caller, who must then keep it open until the stream has ended.
    /// - Parameter delivery: a handler that takes the events as they are read, instead of
    ///   ``events``: a consumer that stamps or forwards each chunk saves the task switch of
    ///   reading the stream (its own buffer then bounds what waits).
    public init(
        descriptor: FileDescriptor, queue: DispatchQueue, chunkSize: Int = 4096, bufferedChunks: Int = 256,
        closesDescriptor: Bool = true, delivery: Delivery? = nil
    ) throws(Errno) {
        let fd = try descriptor.descriptor()
        self.descriptor = descriptor
        self.chunkSize = chunkSize
        self.delivery = delivery
        (events, continuation) = AsyncStream.makeStream(
            of: ByteStreamEvent.self, bufferingPolicy: .bufferingNewest(bufferedChunks))
        let source = try ReadinessSource(
            descriptor: fd, queue: queue, onCancel: { [descriptor] in if closesDescriptor { descriptor.close() } },
            onReady: { [weak self] in self?.readAvailable() })
        // The source may already have read to the end and finished before it is stored here.
        let finishedMeanwhile = state.withLock { state -> Bool in
            state.source = source
            return state.finished
        }
        if finishedMeanwhile { source.cancel() }
        continuation.onTermination = { [weak self] _ in self?.finish(.closed) }
    }

    /// Chunks dropped because the consumer fell behind.
    public var droppedChunks: Int { state.withLock { $0.dropped } }

    /// Stops reading, closes the descriptor and ends the stream with ``ByteStreamEnd/closed``.
    /// Idempotent.
    public func cancel() { finish(.closed) }

    private func readAvailable() {
        // Drain until EAGAIN: the source fires once per readiness edge batch.
        while true {
            do {
                let bytes = try descriptor.read(maximum: chunkSize)
                if bytes.isEmpty {
                    finish(.hangUp)
                    return
                }
                if let delivery {
                    delivery(.bytes(bytes))
                } else if case .dropped = continuation.yield(.bytes(bytes)) {
                    state.withLock { $0.dropped += 1 }
                }
                if bytes.count < chunkSize { return }
            } catch let error {
                switch error {
                case .wouldBlock: return
                case .ioError: finish(.hangUp)
                case .noSuchDevice, .noSuchDeviceOrAddress: finish(.deviceRemoved(error))
                case .badFileDescriptor: finish(.closed)
                default: finish(.failed(error))
                }
                return
            }
        }
    }

    private func finish(_ reason: ByteStreamEnd) {
        let (first, source) = state.withLock { state -> (Bool, ReadinessSource?) in
            guard !state.finished else { return (false, nil) }
            state.finished = true
            let source = state.source
            state.source = nil
            return (true, source)
        }
        guard first else { return }
        // Cancelling runs the cancel handler, which closes the descriptor.
        source?.cancel()
        if let delivery {
            delivery(.end(reason))
        } else {
            continuation.yield(.end(reason))
        }
        continuation.finish()
    }
}

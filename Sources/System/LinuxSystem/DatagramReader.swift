public import Dispatch
import Synchronization

/// How a ``DatagramReader`` stopped on its own.
public enum DatagramReaderEnd: Sendable, Equatable {
    /// The peer closed its end (a read returned end of file).
    case endOfFile
    /// A read failed.
    case failed(Errno)
}

/// Reads a non-blocking datagram or seqpacket socket: one `deliver` call per datagram, on the
/// reader's queue, in arrival order.
///
/// The reader owns the descriptor and closes it exactly once, after the last read (when it stops
/// on its own, or after ``close()``). When the peer closes its end or a read fails, reading stops
/// and `ended` is called once; ``close()`` stops reading without calling it.
public final class DatagramReader: Sendable {
    private let descriptor: FileDescriptor
    private let maximumLength: Int
    private let deliver: @Sendable ([UInt8]) -> Void
    private let ended: @Sendable (DatagramReaderEnd) -> Void
    private let stopped = Atomic<Bool>(false)
    private let readiness: Mutex<ReadinessSource?> = Mutex(nil)
    private let queue: DispatchQueue

    /// Takes ownership of `descriptor` and makes it non-blocking.
    /// - Parameter maximumLength: the largest datagram expected; a longer one is truncated by the
    ///   kernel, so give it room beyond what the protocol announces.
    /// - Throws: ``Errno`` when the descriptor cannot be made non-blocking (it is closed then).
    public init(
        descriptor: FileDescriptor, maximumLength: Int, queue: DispatchQueue,
        deliver: @escaping @Sendable ([UInt8]) -> Void, ended: @escaping @Sendable (DatagramReaderEnd) -> Void
    ) throws(Errno) {
        do {
            try descriptor.setNonBlocking()
        } catch {
            descriptor.close()
            throw error
        }
        self.descriptor = descriptor
        self.maximumLength = maximumLength
        self.queue = queue
        self.deliver = deliver
        self.ended = ended
    }

    /// Starts reading. Call once.
    /// - Throws: ``Errno/badFileDescriptor`` when the reader was closed before it started.
    public func start() throws(Errno) {
        let fd = try descriptor.descriptor()
        let source = try ReadinessSource(
            descriptor: fd, queue: queue, onCancel: { [descriptor] in descriptor.close() },
            onReady: { [weak self] in self?.drain() })
        let closedMeanwhile = readiness.withLock { readiness -> Bool in
            readiness = source
            return stopped.load(ordering: .relaxed)
        }
        if closedMeanwhile { cancelSource() }
    }

    /// Stops reading and closes the descriptor. Idempotent, callable from any thread.
    public func close() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        cancelSource()
    }

    /// Runs `body` on the reader's queue after reading every datagram the socket holds now
    /// (until `EAGAIN`; nothing is read once the reader stopped): after it, the socket's receive
    /// queue had room, so a peer that answers into it (the kernel's management socket) can.
    public func afterDraining(_ body: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            drain()
            body()
        }
    }

    private func drain() {
        while !stopped.load(ordering: .relaxed) {
            do {
                let datagram = try descriptor.read(maximum: maximumLength)
                if datagram.isEmpty {
                    stop(.endOfFile)
                    return
                }
                deliver(datagram)
            } catch let error {
                if error == .wouldBlock { return }
                stop(.failed(error))
                return
            }
        }
    }

    private func stop(_ reason: DatagramReaderEnd) {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        cancelSource()
        ended(reason)
    }

    private func cancelSource() {
        let source = readiness.withLock { source -> ReadinessSource? in
            defer { source = nil }
            return source
        }
        // Not started: nothing watches the descriptor, so it is closed here instead of by the
        // source's cancel handler.
        guard let source else { return descriptor.close() }
        source.cancel()
    }
}

/// One client of a ``UnixLineServer``: its descriptor, its watch and bounded buffers.
/// Owned by the server actor and never leaves it; the watch's handler finds it by identity.
final class LineConnection {
    /// The accepted socket, non-blocking.
    let descriptor: FileDescriptor
    /// The raw number, for the watch; valid until the watch's `onCancel` closes `descriptor`.
    let fd: Int32
    /// Bytes read and not yet handled. Bounded: reading stops while a request is handled, and
    /// more than the request limit without a newline ends the connection.
    var input: [UInt8] = []
    /// Answer bytes not yet taken by the kernel: at most one answer line.
    var output: [UInt8] = []
    /// The one watch on the descriptor, for its whole life. Reading is suspended while a request
    /// is answered and after the client's end of input; writing is suspended except while
    /// `output` waits for room in the socket. Its `onCancel` closes `descriptor`.
    var watch: ReadinessSource?
    /// The handler task of the request being answered; one at a time, so answers keep
    /// request order and a connection holds at most one answer.
    var request: Task<Void, Never>?
    /// The client shut down its sending side: answer what is complete, then close.
    var inputEnded = false
    /// Close once `output` is sent (after a closing line).
    var closeAfterFlush = false
    var closed = false
    /// The last time bytes moved in either direction; the idle sweep measures from here.
    var lastActivity: ContinuousClock.Instant

    init(descriptor: FileDescriptor, fd: Int32, now: ContinuousClock.Instant) {
        self.descriptor = descriptor
        self.fd = fd
        self.lastActivity = now
    }
}

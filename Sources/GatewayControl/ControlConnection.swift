import Dispatch
import LinuxSystem

/// One client of the control server: its descriptor, dispatch sources and bounded buffers.
///
/// `@unchecked Sendable`: every property is read and written on the server's serial queue only
/// (the sources' handlers run there, and handler tasks hop back there with their responses).
final class ControlConnection: @unchecked Sendable {
    /// The accepted socket, non-blocking.
    let descriptor: FileDescriptor
    /// The raw number, for the dispatch sources; valid until the last source's cancel
    /// handler closes `descriptor`.
    let fd: Int32
    /// Bytes read and not yet handled. Bounded: reading stops while a request is handled, and
    /// more than the request limit without a newline ends the connection.
    var input: [UInt8] = []
    /// Response bytes not yet taken by the kernel: at most one response.
    var output: [UInt8] = []
    var readSource: (any DispatchSourceRead)?
    /// A suspended source must be resumed before it is cancelled, or its cancel handler (which
    /// closes the descriptor) never runs.
    var readSuspended = false
    /// Exists only while `output` waits for room in the socket.
    var writeSource: (any DispatchSourceWrite)?
    /// Sources whose cancel handler has not run yet; the last one closes the descriptor.
    var liveSources = 0
    /// The handler task of the request being answered; one at a time, so responses keep
    /// request order and a connection holds at most one response.
    var request: Task<Void, Never>?
    /// The client shut down its sending side: answer what is complete, then close.
    var inputEnded = false
    /// Close once `output` is sent (after an error response).
    var closeAfterFlush = false
    var closed = false
    /// The last time bytes moved in either direction; the idle sweep measures from here.
    var lastActivity: ContinuousClock.Instant

    init(descriptor: FileDescriptor, fd: Int32, now: ContinuousClock.Instant) {
        self.descriptor = descriptor
        self.fd = fd
        self.lastActivity = now
    }

    /// Called from each source's cancel handler; closes the descriptor after the last one, as
    /// dispatch_source_cancel(3) requires.
    func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 { descriptor.close() }
    }
}

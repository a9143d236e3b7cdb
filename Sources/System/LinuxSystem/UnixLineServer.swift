import Synchronization
import Dispatch
import AsyncPrimitives

/// A Unix-domain stream socket that answers request lines: a client sends requests of one line
/// each and gets one answer line per request, in order. What a line means is the owner's
/// ``LineHandler``; the server only accepts, frames, bounds and writes.
///
/// Isolation: the server is an actor whose executor is a ``QueueExecutor``; the watches
/// (``ReadinessSource``, in one ``ReadinessSet`` of the server's) that drive accepting, reading
/// and writing on non-blocking descriptors, and the idle sweep's timer, run on that same queue
/// and enter the actor with `assumeIsolated`, so the compiler checks every access to the server's
/// state. Each connection has one watch for its whole life, reading and writing, whose writing
/// half is suspended except while an answer waits for room; its descriptor is closed in that
/// watch's `onCancel`. No client can
/// hold up another: a client that never reads its answer only fills its own socket buffer.
/// Handlers run as tasks; a connection has at most one request in flight, so its answers keep
/// request order and it holds at most one answer.
///
/// Limits (``Limits``): a request line longer than `maximumRequestBytes` gets the
/// ``ClosingLines/tooLong`` line and the connection is closed; a connection with no traffic for
/// `idleTimeout` (and no request in flight) gets ``ClosingLines/idle`` and is closed; beyond
/// `maximumClients` connections a newcomer gets ``ClosingLines/busy`` and is closed. When
/// accept(2) fails for lack of descriptors (EMFILE, ENFILE) or memory, the server stops accepting
/// for `acceptPause` at a time instead of spinning. What the owner may want to log arrives as an
/// ``Event``, at most once a minute for each kind of trouble.
public actor UnixLineServer {
    /// The bounds a line server enforces; the defaults suit a gateway's control socket.
    public struct Limits: Sendable, Hashable {
        /// The longest request line, without its newline. Default 64 KiB: a request is a small
        /// JSON object, and the bound caps each connection's input buffer.
        public var maximumRequestBytes: Int
        /// How long a connection may stay silent (no request, no response moving) before it is
        /// closed. Default 10 s.
        public var idleTimeout: Duration
        /// The most connections served at once. Default 256: far more than people and scripts
        /// use, and a quarter of the usual 1024-descriptor limit.
        public var maximumClients: Int
        /// How long accepting pauses after accept(2) ran out of descriptors or memory. Default
        /// 250 ms.
        public var acceptPause: Duration

        /// Limits; every argument defaults to the value documented on its property.
        public init(
            maximumRequestBytes: Int = 64 * 1024, idleTimeout: Duration = .seconds(10),
            maximumClients: Int = 256, acceptPause: Duration = .milliseconds(250)
        ) {
            self.maximumRequestBytes = maximumRequestBytes
            self.idleTimeout = idleTimeout
            self.maximumClients = maximumClients
            self.acceptPause = acceptPause
        }
    }

    /// The lines the server sends on its own, each just before it closes a connection. Without
    /// their newline, which the server adds.
    public struct ClosingLines: Sendable, Hashable {
        /// To a newcomer beyond `maximumClients`: one attempt that does not wait, so a client may
        /// see only the connection close.
        public var busy: [UInt8]
        /// To a client whose request line is longer than `maximumRequestBytes`.
        public var tooLong: [UInt8]
        /// To a connection closed for being idle, best effort, unless an answer is still waiting
        /// to be sent on it.
        public var idle: [UInt8]

        /// The three lines.
        public init(busy: [UInt8], tooLong: [UInt8], idle: [UInt8]) {
            self.busy = busy
            self.tooLong = tooLong
            self.idle = idle
        }
    }

    /// What the server reports to its owner, who logs it.
    public enum Event: Sendable, Hashable {
        /// accept(2) failed (out of descriptors or memory, or anything else); accepting pauses
        /// for `acceptPause` at a time until it succeeds. Once per episode, at most once a minute.
        case acceptFailing(Errno)
        /// Accepting works again after an episode reported by ``acceptFailing(_:)``; `pauses`
        /// counts the pauses the episode took.
        case acceptRecovered(pauses: Int)
        /// A newcomer was refused with ``ClosingLines/busy``; `refusedSoFar` counts every refusal
        /// since the start. At most once a minute.
        case refusedBusy(refusedSoFar: Int)
        /// ``stop()`` could not remove the socket file.
        case socketFileNotRemoved(Errno)
    }

    /// Answers one request line (without its newline) with one line (without its newline).
    /// It runs as a task, which is cancelled when its connection closes or the server stops.
    public typealias LineHandler = @Sendable ([UInt8]) async -> [UInt8]

    /// The socket file.
    public nonisolated let path: String
    /// Whether the socket file at `path` is this server's: bound by its ``start()`` and not yet
    /// removed. ``removeSocketFile()`` removes only such a file, never another daemon's.
    private nonisolated let ownsSocketFile = Mutex(false)
    private let mode: UInt32
    private let limits: Limits
    private let closingLines: ClosingLines
    private let onEvent: @Sendable (Event) -> Void
    private let handler: LineHandler
    private let executor: QueueExecutor
    private var queue: DispatchQueue { executor.queue }
    /// The server's queue, which runs its state and every readiness source's handler.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The byte that ends a line.
    private static let newline = UInt8(ascii: "\n")
    /// Trouble is reported at most this often.
    private static let reportInterval = Duration.seconds(60)

    /// The epoll set every watch of the server is in, made by ``start()``.
    private var readiness: ReadinessSet?
    private var listener: ReadinessSource?
    private var listenerDescriptor: FileDescriptor?
    private var sweeper: (any DispatchSourceTimer)?
    private var connections: [ObjectIdentifier: LineConnection] = [:]
    /// Between a failed accept for lack of resources and the next successful one.
    private var acceptStarved = false
    private var starvedAccepts = 0
    /// Whether this episode was reported (episodes are reported once a minute at most).
    private var starvationReported = false
    private var lastStarvationReport: ContinuousClock.Instant?
    private var refusedBusy = 0
    private var lastBusyReport: ContinuousClock.Instant?
    private var stopped = false

    /// A server for the socket file `path`, made with `mode`, whose queue is labelled
    /// `queueLabel`, answering each request line with `handler`. Nothing happens until
    /// ``start()``.
    public init(
        path: String, mode: UInt32 = 0o660, queueLabel: String, limits: Limits = Limits(), closingLines: ClosingLines,
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }, handler: @escaping LineHandler
    ) {
        self.path = path
        self.mode = mode
        self.limits = limits
        self.closingLines = closingLines
        self.onEvent = onEvent
        self.handler = handler
        self.executor = QueueExecutor(label: queueLabel)
    }

    /// Makes the socket's directory (mode 0750), binds the socket (replacing a stale socket
    /// file, one nobody answers on) and starts accepting.
    /// - Throws: ``UnixLineServerError`` when the directory or socket cannot be made, or another
    ///   process is already listening on `path` (``UnixLineServerError/Code/alreadyServed``).
    public func start() throws(UnixLineServerError) {
        // The socket's directory: what precedes its last "/" ("/" itself for a file at the root).
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? ""
        do {
            try FileSystem.makeDirectory(directory, mode: 0o750)
        } catch {
            throw UnixLineServerError(.makeDirectory, path: directory, errno: error)
        }
        guard UnixStreamSocket.fits(path) else {
            throw UnixLineServerError(.pathTooLong, path: path, errno: .nameTooLong)
        }
        // A live server answers a connect; a stale socket file from a crash does not.
        if let probe = try? UnixStreamSocket.connect(to: path) {
            probe.close()
            throw UnixLineServerError(.alreadyServed, path: path, errno: .addressInUse)
        }
        try? FileSystem.remove(path)
        let listener: FileDescriptor
        do {
            listener = try UnixStreamSocket.make(nonBlocking: true)
        } catch {
            throw UnixLineServerError(.socket, path: path, errno: error)
        }
        do {
            try bindAndListen(listener)
        } catch {
            listener.close()
            throw error
        }
        ownsSocketFile.withLock { $0 = true }
        guard let fd = listener.rawValue else {
            throw UnixLineServerError(.listen, path: path, errno: .badFileDescriptor)
        }
        let readiness: ReadinessSet
        let source: ReadinessSource
        do {
            readiness = try ReadinessSet(queue: queue)
        } catch {
            listener.close()
            throw UnixLineServerError(.listen, path: path, errno: error)
        }
        do {
            source = try ReadinessSource(
                descriptor: fd, in: readiness, events: [.readable], onCancel: { listener.close() }
            ) { [weak self] _ in
                self?.onQueue { $0.acceptAll() }
            }
        } catch {
            readiness.close()
            listener.close()
            throw UnixLineServerError(.listen, path: path, errno: error)
        }
        let sweeper = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.milliseconds(Int(max(50, min(1000, limits.idleTimeout.milliseconds / 4))))
        sweeper.schedule(deadline: .now() + interval, repeating: interval)
        sweeper.setEventHandler { [weak self] in self?.onQueue { $0.closeIdleConnections() } }
        self.readiness = readiness
        self.listener = source
        self.listenerDescriptor = listener
        self.sweeper = sweeper
        sweeper.resume()
    }

    private func bindAndListen(_ listener: FileDescriptor) throws(UnixLineServerError) {
        do {
            try UnixStreamSocket.bind(listener, to: path, mode: mode)
        } catch {
            throw UnixLineServerError(.bind, path: path, errno: error)
        }
        do {
            try UnixStreamSocket.listen(listener, backlog: 128)
        } catch {
            throw UnixLineServerError(.listen, path: path, errno: error)
        }
    }

    /// Stops accepting, closes every connection (cancelling requests in flight) and removes the
    /// socket file; a failure to remove it other than its absence is reported as
    /// ``Event/socketFileNotRemoved(_:)``. Call it once, from outside the server's queue.
    ///
    /// Synchronous, so that it can run in a `defer`: it waits on the server's queue for the
    /// handler in progress there, which never blocks (every descriptor is non-blocking).
    public nonisolated func stop() {
        executor.queue.sync { assumeIsolated { $0.stopOnQueue() } }
        do {
            try FileSystem.remove(path)
        } catch where error != .noSuchFile {
            onEvent(.socketFileNotRemoved(error))
        } catch {}  // Already gone: nothing to remove.
    }

    private func stopOnQueue() {
        stopped = true
        listener?.cancel()
        listener = nil
        sweeper?.cancel()
        sweeper = nil
        for connection in connections.values { close(connection) }
        readiness?.close()
        readiness = nil
    }

    /// Runs `body` isolated to the server. Only for handlers of readiness sources and timers made
    /// on the server's queue, which is the actor's executor: they run there already.
    private nonisolated func onQueue(_ body: @Sendable (isolated UnixLineServer) -> Void) {
        assumeIsolated { body($0) }
    }

    /// Removes the socket file without touching the queue or reporting: for a forced exit, which
    /// must not wait for anything; only a file this server bound (a forced exit during start-up,
    /// before it listens or when another daemon serves the path, leaves the file alone). A
    /// failure is left for the next start, which replaces a stale socket file.
    public nonisolated func removeSocketFile() {
        guard ownsSocketFile.withLock({ owns in defer { owns = false }; return owns }) else { return }
        try? FileSystem.remove(path)
    }

    // MARK: Accepting

    private func acceptAll() {
        guard !stopped, let listener = listenerDescriptor else { return }
        while true {
            let descriptor: FileDescriptor
            do {
                guard let accepted = try UnixStreamSocket.accept(listener) else { return }
                descriptor = accepted
            } catch {
                // Out of descriptors (EMFILE, ENFILE) or memory (ENOBUFS, ENOMEM), or anything
                // else: the pending connection stays queued and the listener stays readable, so
                // retrying now would spin. Pause instead.
                pauseAccepting(after: error)
                return
            }
            if acceptStarved {
                acceptStarved = false
                if starvationReported { onEvent(.acceptRecovered(pauses: starvedAccepts)) }
                starvationReported = false
                starvedAccepts = 0
            }
            guard let fd = descriptor.rawValue else { continue }
            if connections.count >= limits.maximumClients {
                refuseBusy(descriptor)
                continue
            }
            do {
                try register(LineConnection(descriptor: descriptor, fd: fd, now: .now))
            } catch {
                // The set cannot take it (ENOMEM, ENOSPC: fs.epoll.max_user_watches): as short of
                // resources as a failed accept, and paused the same way.
                descriptor.close()
                pauseAccepting(after: error)
                return
            }
        }
    }

    private func pauseAccepting(after error: Errno) {
        guard let listener = listener, !listener.isSuspended else { return }
        listener.suspend()
        starvedAccepts += 1
        if !acceptStarved {
            acceptStarved = true
            let now = ContinuousClock.now
            if lastStarvationReport.map({ now - $0 >= Self.reportInterval }) ?? true {
                lastStarvationReport = now
                starvationReported = true
                onEvent(.acceptFailing(error))
            }
        }
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(limits.acceptPause.milliseconds))) { [weak self] in
            self?.onQueue { server in
                guard !server.stopped else { return }
                server.listener?.resume()
            }
        }
    }

    private func refuseBusy(_ descriptor: FileDescriptor) {
        // One non-blocking attempt: a fresh socket's buffer takes a short line. If it does
        // not, the client still sees the connection close, which is the refusal.
        _ = Result { () throws(Errno) in try UnixStreamSocket.sendSome(descriptor, closingLines.busy + [Self.newline]) }
        descriptor.close()
        refusedBusy += 1
        let now = ContinuousClock.now
        if lastBusyReport.map({ now - $0 >= Self.reportInterval }) ?? true {
            lastBusyReport = now
            onEvent(.refusedBusy(refusedSoFar: refusedBusy))
        }
    }

    private func register(_ connection: LineConnection) throws(Errno) {
        guard let readiness else { throw .badFileDescriptor }
        let id = ObjectIdentifier(connection)
        let descriptor = connection.descriptor
        connection.watch = try ReadinessSource(
            descriptor: connection.fd, in: readiness, events: [.readable, .writable], suspended: [.writable],
            onCancel: { descriptor.close() }
        ) { [weak self] event in
            self?.onQueue { server in
                guard let connection = server.connections[id] else { return }
                switch event {
                case .readable: server.readAvailable(connection)
                case .writable: server.flush(connection)
                }
            }
        }
        connections[id] = connection
    }

    // MARK: Reading and answering

    private func readAvailable(_ connection: LineConnection) {
        guard !connection.closed, connection.watch?.isSuspended(.readable) == false else { return }
        // Read at most one byte past the limit: enough to know a line is too long, and the
        // buffer never grows beyond it however much the client sends.
        while connection.input.count <= limits.maximumRequestBytes {
            let room = limits.maximumRequestBytes + 1 - connection.input.count
            do {
                let chunk = try connection.descriptor.read(maximum: min(room, 16 * 1024))
                if chunk.isEmpty {
                    connection.inputEnded = true
                    break
                }
                connection.input.append(contentsOf: chunk)
                connection.lastActivity = .now
            } catch .wouldBlock {
                break
            } catch {
                // ECONNRESET and the like: the client is gone; nobody can read an answer.
                close(connection)
                return
            }
        }
        if connection.inputEnded { suspendReading(connection) }
        processInput(connection)
    }

    /// Starts the next complete request, or reports an over-long one, or resumes reading.
    private func processInput(_ connection: LineConnection) {
        guard !connection.closed, connection.request == nil, connection.output.isEmpty else { return }
        while let end = connection.input.firstIndex(of: Self.newline) {
            let line = Array(connection.input[..<end])
            connection.input.removeSubrange(...end)
            // A blank line (spaces, a carriage return) is no request.
            guard !line.allSatisfy({ $0 == 32 || $0 == 13 }) else { continue }
            // One request at a time: reading waits until its answer is sent, so a client that
            // pipelines requests without reading answers is held back by its own socket buffer.
            suspendReading(connection)
            let handler = handler
            let id = ObjectIdentifier(connection)
            // A task is the boundary from the actor to the async handler; order is kept because
            // the next request starts only after this one's answer was queued on the connection.
            connection.request = Task { [weak self] in
                let answer = await handler(line)
                await self?.finishRequest(id, answer)
            }
            return
        }
        if connection.input.count > limits.maximumRequestBytes {
            suspendReading(connection)
            connection.input = []
            connection.closeAfterFlush = true
            respond(connection, closingLines.tooLong)
            return
        }
        if connection.inputEnded {
            close(connection)
            return
        }
        resumeReading(connection)
    }

    private func finishRequest(_ id: ObjectIdentifier, _ answer: [UInt8]) {
        guard let connection = connections[id], !connection.closed else { return }
        connection.request = nil
        respond(connection, answer)
    }

    private func respond(_ connection: LineConnection, _ line: [UInt8]) {
        connection.output = line
        connection.output.append(Self.newline)
        flush(connection)
    }

    /// Sends what the socket takes now; waits for room by resuming the watch's writing half,
    /// never by blocking.
    private func flush(_ connection: LineConnection) {
        guard !connection.closed else { return }
        while !connection.output.isEmpty {
            let sent = Result { () throws(Errno) in try UnixStreamSocket.sendSome(connection.descriptor, connection.output) }
            switch sent {
            case .success(let count):
                connection.output.removeFirst(count)
                connection.lastActivity = .now
            case .failure(.wouldBlock):
                waitForRoom(connection)
                return
            case .failure:
                // EPIPE, ECONNRESET: the client left without its answer.
                close(connection)
                return
            }
        }
        connection.watch?.suspend(.writable)
        if connection.closeAfterFlush {
            close(connection)
            return
        }
        processInput(connection)
    }

    private func waitForRoom(_ connection: LineConnection) {
        connection.watch?.resume(.writable)
    }

    private func suspendReading(_ connection: LineConnection) {
        connection.watch?.suspend(.readable)
    }

    private func resumeReading(_ connection: LineConnection) {
        guard !connection.inputEnded else { return }
        connection.watch?.resume(.readable)
    }

    // MARK: Closing

    private func closeIdleConnections() {
        let now = ContinuousClock.now
        let idle = connections.values.filter {
            $0.request == nil && now - $0.lastActivity >= limits.idleTimeout
        }
        for connection in idle {
            if connection.output.isEmpty {
                // Best effort, so that a client that sent half a line learns why; one that does
                // not read loses nothing it asked for.
                // The descriptor and line are read outside the closure: Swift 6.0's region
                // checking rejects a closure capturing the actor-isolated connection.
                let descriptor = connection.descriptor
                let line = closingLines.idle + [Self.newline]
                _ = Result { () throws(Errno) in try UnixStreamSocket.sendSome(descriptor, line) }
            }
            close(connection)
        }
    }

    private func close(_ connection: LineConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connection.request?.cancel()
        connection.request = nil
        connections[ObjectIdentifier(connection)] = nil
        // Out of the set when cancel() returns; its onCancel closes the descriptor.
        connection.watch?.cancel()
        connection.watch = nil
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    fileprivate var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

import Dispatch
import FoundationEssentials
import AsyncPrimitives
import LinuxSystem
public import GatewayRuntime

/// The daemon's control socket: a Unix-domain stream socket, mode 0660, one JSON request and one
/// JSON response per line (see ``ControlRequest``).
///
/// Isolation: the server is an actor whose executor is a ``QueueExecutor``; the readiness
/// sources (LinuxSystem's `ReadinessSource`) that drive accepting, reading and writing on
/// non-blocking descriptors, and the idle sweep's timer, run on that same queue and enter the
/// actor with `assumeIsolated`, so the compiler checks every access to the server's state. No
/// client can hold up another: a client that never reads its answer only
/// fills its own socket buffer. Handlers run as tasks; a connection has at most one request in
/// flight, so its responses keep request order and it holds at most one response.
///
/// Limits (``Limits``): a request line longer than `maximumRequestBytes` gets an error response
/// and the connection is closed; a connection with no traffic for `idleTimeout` (and no request
/// in flight) is closed; beyond `maximumClients` connections a newcomer gets a one-line "busy"
/// error and is closed. When accept(2) fails for lack of descriptors (EMFILE, ENFILE) or memory,
/// the server stops accepting for `acceptPause` at a time instead of spinning, and logs the
/// condition once per episode (at most once a minute).
public actor ControlServer {
    /// The bounds a control server enforces; the defaults suit a gateway.
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

    /// The socket file.
    public let path: String
    private let handlers: [String: ControlHandler]
    private let logger: Logger
    private let limits: Limits
    private let executor = QueueExecutor(label: "healthgate.control")
    private var queue: DispatchQueue { executor.queue }
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Warnings about refused or failed accepts repeat at most this often.
    private static let warningInterval = Duration.seconds(60)

    private var listener: ReadinessSource?
    private var listenerDescriptor: FileDescriptor?
    private var sweeper: (any DispatchSourceTimer)?
    private var connections: [ObjectIdentifier: ControlConnection] = [:]
    /// Between a failed accept for lack of resources and the next successful one.
    private var acceptStarved = false
    private var starvedAccepts = 0
    /// Whether this episode's warning was logged (episodes are warned about once a minute).
    private var starvationWarned = false
    private var lastStarvationWarning: ContinuousClock.Instant?
    private var refusedBusy = 0
    private var lastBusyWarning: ContinuousClock.Instant?
    private var stopped = false

    /// A server for `path` answering `handlers` (keyed by command). Nothing happens until
    /// ``start()``.
    public init(path: String, handlers: [String: ControlHandler], logger: Logger, limits: Limits = Limits()) {
        self.path = path
        self.handlers = handlers
        self.logger = logger
        self.limits = limits
    }

    /// Binds the socket (replacing a stale one) and starts accepting.
    /// - Throws: ``ControlSocketError`` when the directory or socket cannot be made, or another
    ///   daemon is already listening (`EADDRINUSE`).
    public nonisolated func start() throws(ControlSocketError) {
        let started: Result<Void, ControlSocketError> = executor.queue.sync {
            assumeIsolated { server in Result { () throws(ControlSocketError) in try server.startOnQueue() } }
        }
        try started.get()
    }

    private func startOnQueue() throws(ControlSocketError) {
        // The socket's directory: what precedes its last "/" ("/" itself for a file at the root).
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? ""
        do {
            try FileSystem.makeDirectory(directory, mode: 0o750)
        } catch {
            throw ControlSocketError(path: directory, operation: "mkdir", error)
        }
        guard UnixStreamSocket.fits(path) else {
            throw ControlSocketError(path: path, operation: "socket path too long:", .nameTooLong)
        }
        // A live daemon answers a connect; a stale socket file from a crash does not.
        if let probe = try? UnixStreamSocket.connect(to: path) {
            probe.close()
            throw ControlSocketError(path: path, operation: "another healthgate is listening on", .addressInUse)
        }
        try? FileSystem.remove(path)
        let listener: FileDescriptor
        do {
            listener = try UnixStreamSocket.make(nonBlocking: true)
        } catch {
            throw ControlSocketError(path: path, operation: "socket", error)
        }
        do {
            try bindAndListen(listener)
        } catch {
            listener.close()
            throw error
        }
        guard let fd = listener.rawValue else {
            throw ControlSocketError(path: path, operation: "listen on", .badFileDescriptor)
        }
        let source = ReadinessSource(descriptor: fd, queue: queue, onCancel: { listener.close() }) { [weak self] in
            self?.onQueue { $0.acceptAll() }
        }
        let sweeper = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.milliseconds(Int(max(50, min(1000, limits.idleTimeout.milliseconds / 4))))
        sweeper.schedule(deadline: .now() + interval, repeating: interval)
        sweeper.setEventHandler { [weak self] in self?.onQueue { $0.closeIdleConnections() } }
        self.listener = source
        self.listenerDescriptor = listener
        self.sweeper = sweeper
        sweeper.resume()
        logger.info("control socket listening on \(path)")
    }

    private func bindAndListen(_ listener: FileDescriptor) throws(ControlSocketError) {
        do {
            // 0660: the daemon's user and group may talk to it, nobody else.
            try UnixStreamSocket.bind(listener, to: path, mode: 0o660)
        } catch {
            throw ControlSocketError(path: path, operation: "bind", error)
        }
        do {
            try UnixStreamSocket.listen(listener, backlog: 128)
        } catch {
            throw ControlSocketError(path: path, operation: "listen on", error)
        }
    }

    /// Stops accepting, closes every connection (cancelling requests in flight) and removes the
    /// socket file. Call it once, from outside the server's queue.
    public nonisolated func stop() {
        executor.queue.sync { assumeIsolated { $0.stopOnQueue() } }
        do {
            try FileSystem.remove(path)
        } catch where error != .noSuchFile {
            logger.warning("cannot remove the control socket \(path): \(error)")
        } catch {}  // Already gone: nothing to remove.
    }

    private func stopOnQueue() {
        do {
            stopped = true
            listener?.cancel()
            listener = nil
            sweeper?.cancel()
            sweeper = nil
            for connection in connections.values { close(connection) }
        }
    }

    /// Runs `body` isolated to the server. Only for handlers of readiness sources and timers made
    /// on the server's queue, which is the actor's executor: they run there already.
    private nonisolated func onQueue(_ body: @Sendable (isolated ControlServer) -> Void) {
        assumeIsolated { body($0) }
    }

    /// Removes the socket file without touching the queue or logging: for a forced exit, which
    /// must not wait for anything. A failure is left for the next start, which replaces a stale
    /// socket file.
    public nonisolated func removeSocketFile() {
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
                if starvationWarned {
                    logger.notice("control socket accepting again (\(starvedAccepts) pause(s) while it could not)")
                }
                starvationWarned = false
                starvedAccepts = 0
            }
            guard let fd = descriptor.rawValue else { continue }
            if connections.count >= limits.maximumClients {
                refuseBusy(descriptor)
                continue
            }
            register(ControlConnection(descriptor: descriptor, fd: fd, now: .now))
        }
    }

    private func pauseAccepting(after error: Errno) {
        guard let listener = listener, !listener.isSuspended else { return }
        listener.suspend()
        starvedAccepts += 1
        if !acceptStarved {
            acceptStarved = true
            let now = ContinuousClock.now
            if lastStarvationWarning.map({ now - $0 >= Self.warningInterval }) ?? true {
                lastStarvationWarning = now
                starvationWarned = true
                logger.warning(
                    "control socket cannot accept: \(error); pausing accepts for \(limits.acceptPause) at a time "
                        + "until it can (said once)")
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
        var line = Self.encode(ControlResponse(ok: false, error: "busy: \(limits.maximumClients) clients are connected; try again"))
        line.append(UInt8(ascii: "\n"))
        // One non-blocking attempt: a fresh socket's buffer takes a short line. If it does
        // not, the client still sees the connection close, which is the refusal.
        _ = Result { () throws(Errno) in try UnixStreamSocket.sendSome(descriptor, line) }
        descriptor.close()
        refusedBusy += 1
        let now = ContinuousClock.now
        if lastBusyWarning.map({ now - $0 >= Self.warningInterval }) ?? true {
            lastBusyWarning = now
            logger.warning(
                "control socket has \(limits.maximumClients) clients; refusing new ones (\(refusedBusy) refused so far)")
        }
    }

    private func register(_ connection: ControlConnection) {
        let id = ObjectIdentifier(connection)
        let closer = connection.closer
        closer.sourceAdded()
        connection.readSource = ReadinessSource(
            descriptor: connection.fd, queue: queue, onCancel: { closer.sourceCancelled() }
        ) { [weak self] in
            self?.onQueue { $0.connections[id].map($0.readAvailable) }
        }
        connections[id] = connection
    }

    // MARK: Reading and answering

    private func readAvailable(_ connection: ControlConnection) {
        guard !connection.closed, connection.readSource?.isSuspended == false else { return }
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
    private func processInput(_ connection: ControlConnection) {
        guard !connection.closed, connection.request == nil, connection.output.isEmpty else { return }
        while let newline = connection.input.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(connection.input[..<newline])
            connection.input.removeSubrange(...newline)
            guard !line.allSatisfy({ $0 == 32 || $0 == 13 }) else { continue }
            // One request at a time: reading waits until its answer is sent, so a client that
            // pipelines requests without reading answers is held back by its own socket buffer.
            suspendReading(connection)
            let handlers = handlers
            let id = ObjectIdentifier(connection)
            // A task is the boundary from the actor to async handlers; order is kept because the
            // next request starts only after this one's response was queued on the connection.
            connection.request = Task { [weak self] in
                let response = await Self.handle(line: line, handlers: handlers)
                await self?.finishRequest(id, response)
            }
            return
        }
        if connection.input.count > limits.maximumRequestBytes {
            suspendReading(connection)
            connection.input = []
            connection.closeAfterFlush = true
            respond(connection, ControlResponse(
                ok: false, error: "request line longer than \(limits.maximumRequestBytes) bytes; closing the connection"))
            return
        }
        if connection.inputEnded {
            close(connection)
            return
        }
        resumeReading(connection)
    }

    private func finishRequest(_ id: ObjectIdentifier, _ response: ControlResponse) {
        guard let connection = connections[id], !connection.closed else { return }
        connection.request = nil
        respond(connection, response)
    }

    static func handle(line: [UInt8], handlers: [String: ControlHandler]) async -> ControlResponse {
        let request: ControlRequest
        do {
            request = try JSONDecoder().decode(ControlRequest.self, from: Data(line))
        } catch {
            return ControlResponse(ok: false, error: "malformed request: expected one JSON object with \"command\" per line")
        }
        guard let handler = handlers[request.command] else {
            return ControlResponse(
                ok: false,
                error: "unknown command \"\(request.command)\"; known: \(handlers.keys.sorted().joined(separator: ", "))")
        }
        do {
            return ControlResponse(ok: true, result: try await handler(request.arguments ?? .object([:])))
        } catch {
            return ControlResponse(ok: false, error: "\(error)")
        }
    }

    /// The response as JSON; a result that cannot be encoded becomes an error response.
    private static func encode(_ response: ControlResponse) -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(response))
        } catch {
            let fallback = ControlResponse(ok: false, error: "the response could not be encoded: \(error)")
            return Array((try? JSONEncoder().encode(fallback)) ?? Data(#"{"ok":false}"#.utf8))
        }
    }

    private func respond(_ connection: ControlConnection, _ response: ControlResponse) {
        connection.output = Self.encode(response)
        connection.output.append(UInt8(ascii: "\n"))
        flush(connection)
    }

    /// Sends what the socket takes now; waits for room with a write source, never by blocking.
    private func flush(_ connection: ControlConnection) {
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
        if let writer = connection.writeSource {
            connection.writeSource = nil
            writer.cancel()
        }
        if connection.closeAfterFlush {
            close(connection)
            return
        }
        processInput(connection)
    }

    private func waitForRoom(_ connection: ControlConnection) {
        guard connection.writeSource == nil else { return }
        let id = ObjectIdentifier(connection)
        let closer = connection.closer
        closer.sourceAdded()
        connection.writeSource = ReadinessSource(
            descriptor: connection.fd, event: .writable, queue: queue, onCancel: { closer.sourceCancelled() }
        ) { [weak self] in
            self?.onQueue { $0.connections[id].map($0.flush) }
        }
    }

    private func suspendReading(_ connection: ControlConnection) {
        connection.readSource?.suspend()
    }

    private func resumeReading(_ connection: ControlConnection) {
        guard !connection.inputEnded else { return }
        connection.readSource?.resume()
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
                var line = Self.encode(ControlResponse(ok: false, error: "idle for \(limits.idleTimeout); closing the connection"))
                line.append(UInt8(ascii: "\n"))
                _ = Result { () throws(Errno) in try UnixStreamSocket.sendSome(connection.descriptor, line) }
            }
            close(connection)
        }
    }

    private func close(_ connection: ControlConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connection.request?.cancel()
        connection.request = nil
        connections[ObjectIdentifier(connection)] = nil
        connection.readSource?.cancel()
        connection.readSource = nil
        connection.writeSource?.cancel()
        connection.writeSource = nil
        connection.closer.closeIfNoSources()
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    fileprivate var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

import AsyncPrimitives
import CMicroHTTPD
import FoundationEssentials
public import GatewayRuntime
import Synchronization
public import Metrics
import Workouts
public import WorkoutPresentation

/// The live board's web server: libmicrohttpd serving the page, its assets, the board as JSON,
/// the history pages, and the board's updates as Server-Sent Events (`/events`).
///
/// **Threads.** libmicrohttpd runs a listening thread and a thread per connection (at most
/// ``connectionLimit``); every request, and every event stream's wait for the next update, runs
/// on those threads, never on Swift's cooperative pool. ``stop()`` waits for them on its own
/// queue.
///
/// **Updates.** ``publish(_:)`` hands a snapshot to every stream (``EventBroadcast``: only the
/// newest is kept, a slow reader skips to it). A stream sends `retry: 1000` first, so a browser
/// reconnects a second after losing the gateway, and a comment every ``keepAliveSeconds`` when
/// nothing changes, so a vanished reader is noticed.
///
/// **Access.** With a token (``WebBoardConfiguration``) every request must carry it
/// (`?token=…` or `Authorization: Bearer …`); others get 401.
public final class BoardServer: Sendable {
    /// Connections served at once; more wait in the listen backlog.
    public static let connectionLimit: UInt32 = 64
    /// Seconds between keep-alive comments on an idle event stream.
    public static let keepAliveSeconds = 10.0

    private let configuration: WebBoardConfiguration
    private let token: String?
    /// The board's pages; nil for a server of the metrics alone.
    private let router: BoardRouter?
    /// `GET /metrics`; nil: not served.
    private let metrics: GatewayMetrics?
    private let logger: Logger
    private let broadcast = EventBroadcast()
    private let executor = QueueExecutor(label: "healthgate.web")
    private let library: MicroHTTPDLibrary
    /// libmicrohttpd's entry points, set by ``start()`` before the daemon exists, so every
    /// request (on libmicrohttpd's threads) finds them.
    private let mhd = Mutex<MicroHTTPDEntryPoints?>(nil)
    private let daemon = Mutex<DaemonHandle?>(nil)
    private let refused = Atomic<Int>(0)

    /// The daemon pointer, owned by this server (started in `start`, stopped in `stop`).
    // @unchecked Sendable: an immutable daemon pointer, only passed to MHD_stop_daemon (once, by
    // stop()) and MHD_get_daemon_info, which libmicrohttpd makes thread-safe; the compiler cannot
    // see that of a C pointer. (A Mutex<OpaquePointer?> was tried: region checking will not let
    // the pointer in, because it comes from a call that was given `self` as context.)
    private struct DaemonHandle: @unchecked Sendable {
        // libmicrohttpd's daemon is thread-safe for MHD_stop_daemon and MHD_get_daemon_info.
        let pointer: OpaquePointer
        let mhd: MicroHTTPDEntryPoints
    }

    /// A server for `board`; nothing is loaded and nothing listens until ``start()``.
    /// - Parameters:
    ///   - token: the token every request must carry; nil for none (loopback only).
    ///   - library: libmicrohttpd, loaded by ``start()``.
    public init(
        configuration: WebBoardConfiguration, token: String?, board: any BoardFeed,
        history: (any WorkoutHistory)?, metrics: GatewayMetrics? = nil, logger: Logger,
        library: MicroHTTPDLibrary = MicroHTTPDLibrary()
    ) {
        self.library = library
        self.configuration = configuration
        self.token = token
        router = BoardRouter(board: board, history: history)
        self.metrics = metrics
        self.logger = logger
    }

    /// A server of `GET /metrics` alone (`metrics.listen`, with the board off or elsewhere).
    public init(
        metricsOnly configuration: WebBoardConfiguration, token: String?, metrics: GatewayMetrics, logger: Logger,
        library: MicroHTTPDLibrary = MicroHTTPDLibrary()
    ) {
        self.library = library
        self.configuration = configuration
        self.token = token
        router = nil
        self.metrics = metrics
        self.logger = logger
    }

    /// Loads libmicrohttpd and starts listening. The server must live until ``stop()`` returns:
    /// libmicrohttpd's threads reach it through an unretained pointer.
    /// - Returns: the port it listens on (the chosen one when the configuration says 0).
    /// - Throws: ``WebBoardError`` when libmicrohttpd cannot be loaded (naming it and what to
    ///   install) or the address cannot be bound.
    @discardableResult
    public func start() throws(WebBoardError) -> UInt16 {
        let entryPoints: MicroHTTPDEntryPoints
        do {
            entryPoints = try library.entryPoints()
        } catch {
            throw WebBoardError("\(error)")
        }
        mhd.withLock { $0 = entryPoints }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let pointer = shim_mhd_start_ipv4(
            entryPoints.startDaemon, configuration.listen.networkOrder, configuration.listen.port,
            UInt32(Self.connectionLimit), boardAccessHandler, context)
        else {
            throw WebBoardError("cannot listen on \(configuration.listen) (in use, or not an address of this machine)")
        }
        daemon.withLock { $0 = DaemonHandle(pointer: pointer, mhd: entryPoints) }
        let port = shim_mhd_bound_port(entryPoints.getDaemonInfo, pointer)
        let address = "http://\(configuration.listen.octets.map(String.init).joined(separator: ".")):\(port)"
        logger.notice(
            (router == nil ? "metrics at \(address)/metrics" : "live board at \(address)/"
                + (metrics == nil ? "" : ", metrics at \(address)/metrics"))
                + (token == nil ? "" : " (token required)"))
        return port
    }

    /// Hands `snapshot` to every event stream.
    public func publish(_ snapshot: BoardSnapshot) {
        do {
            broadcast.publish(Array(try BoardRouter.encode(snapshot)))
        } catch {
            logger.error("cannot encode the board: \(error)")
        }
    }

    /// Publishes the board every `interval` until cancelled.
    public func publishUpdates(from board: any BoardFeed, every interval: Duration, clock: any GatewayClock) async throws {
        while true {
            publish(board.snapshot())
            try await clock.sleep(for: interval)
        }
    }

    /// Ends every event stream, then stops the daemon and waits for its threads (off the pool).
    public func stop() async {
        broadcast.close()
        guard let handle = daemon.withLock({ state -> DaemonHandle? in
            defer { state = nil }
            return state
        }) else { return }
        await executor.run { handle.mhd.stopDaemon(handle.pointer) }
        logger.info((router == nil ? "metrics listener" : "live board") + " stopped (\(String(count: refused.load(ordering: .relaxed), "request")) refused without the token, "
            + "\(String(count: broadcast.skipped, "update")) skipped by slow readers)")
    }

    // MARK: Requests (on libmicrohttpd's threads)

    fileprivate func handle(_ connection: OpaquePointer, url: String, method: String) -> MHD_Result {
        // Set before the daemon started, so always there while it runs.
        guard let mhd = mhd.withLock({ $0 }) else { return .NO }
        guard method == "GET" || method == "HEAD" else {
            return queue(.text(405, "text/plain", "only GET", headers: ["Allow": "GET, HEAD"]), on: connection, mhd)
        }
        if let token, !authorized(connection, token: token, mhd) {
            refused.add(1, ordering: .relaxed)
            return queue(
                .text(401, "text/plain", "this board needs its token: add ?token=… to the address",
                      headers: ["WWW-Authenticate": "Bearer"]), on: connection, mhd)
        }
        if url == "/metrics", let metrics {
            let text = BoardRouter.wait { await metrics.render() }
            switch text {
            case .success(let text):
                return queue(
                    BoardResponse(status: 200, contentType: GatewayMetrics.contentType, body: Array(text.utf8)), on: connection, mhd)
            case .failure(let error): return queue(.text(500, "text/plain", "cannot render the metrics: \(error)"), on: connection, mhd)
            }
        }
        guard let router else { return queue(.text(404, "text/plain", "not found: this listener serves /metrics"), on: connection, mhd) }
        if url == "/events" { return queueEventStream(on: connection, mhd) }
        return queue(router.respond(to: url), on: connection, mhd)
    }

    private func authorized(_ connection: OpaquePointer, token: String, _ mhd: MicroHTTPDEntryPoints) -> Bool {
        let query = mhd.lookupConnectionValue(connection, .GET_ARGUMENT_KIND, "token").map { String(cString: $0) }
        let header = mhd.lookupConnectionValue(connection, .HEADER_KIND, "Authorization").map { String(cString: $0) }
        let bearer = header.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        return [query, bearer].contains { (candidate: String?) in candidate.map { Self.constantTimeEqual($0, token) } ?? false }
    }

    /// Compares without stopping at the first difference, so timing does not reveal a prefix.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private func queue(_ response: BoardResponse, on connection: OpaquePointer, _ mhd: MicroHTTPDEntryPoints) -> MHD_Result {
        let made = response.body.withUnsafeBytes { bytes in
            mhd.createResponseFromBuffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let made else { return .NO }
        defer { mhd.destroyResponse(made) }
        _ = mhd.addResponseHeader(made, "Content-Type", response.contentType)
        _ = mhd.addResponseHeader(made, "Cache-Control", "no-store")
        _ = mhd.addResponseHeader(made, "X-Content-Type-Options", "nosniff")
        for (name, value) in response.headers { _ = mhd.addResponseHeader(made, name, value) }
        return mhd.queueResponse(connection, UInt32(response.status), made)
    }

    private func queueEventStream(on connection: OpaquePointer, _ mhd: MicroHTTPDEntryPoints) -> MHD_Result {
        let stream = Unmanaged.passRetained(EventStream(broadcast: broadcast)).toOpaque()
        guard let made = shim_mhd_create_stream_response(
            mhd.createResponseFromCallback, 16 * 1024, eventStreamReader, stream, eventStreamRelease)
        else {
            Unmanaged<EventStream>.fromOpaque(stream).release()
            return .NO
        }
        defer { mhd.destroyResponse(made) }
        _ = mhd.addResponseHeader(made, "Content-Type", "text/event-stream")
        _ = mhd.addResponseHeader(made, "Cache-Control", "no-store")
        return mhd.queueResponse(connection, 200, made)
    }
}

/// One event stream's position: the last update it sent and the bytes not yet handed to
/// libmicrohttpd. Used by one connection thread at a time (libmicrohttpd calls a response's
/// reader from its connection's thread only).
final class EventStream {
    let broadcast: EventBroadcast
    var seen: UInt64 = 0
    var pending: [UInt8] = Array("retry: 1000\n\n".utf8)
    var offset = 0

    init(broadcast: EventBroadcast) {
        self.broadcast = broadcast
    }

    /// Fills `buffer` with at most `capacity` bytes; blocks until there is something to send.
    /// - Returns: the bytes written, or -1 at the end of the stream.
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        while offset >= pending.count {
            switch broadcast.next(after: seen, timeout: BoardServer.keepAliveSeconds) {
            case .update(let sequence, let payload):
                seen = sequence
                pending = Array("id: \(sequence)\ndata: ".utf8) + payload + Array("\n\n".utf8)
            case .idle:
                pending = Array(": keep-alive\n\n".utf8)
            case .closed:
                return -1
            }
            offset = 0
        }
        let count = min(capacity, pending.count - offset)
        pending.withUnsafeBytes { bytes in
            // offset < pending.count (the loop above), so the buffer is not empty and has a base address.
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}

// libmicrohttpd's callbacks: C function pointers, so they capture nothing and find their Swift
// objects through the context pointer.

private let boardAccessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, _, _ in
    guard let context, let connection, let url, let method else { return .NO }
    let server = Unmanaged<BoardServer>.fromOpaque(context).takeUnretainedValue()
    return server.handle(connection, url: String(cString: url), method: String(cString: method))
}

private let eventStreamReader: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer else { return -1 }
    return Unmanaged<EventStream>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: capacity)
}

private let eventStreamRelease: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<EventStream>.fromOpaque(context).release()
}

import AsyncPrimitives
import CMicroHTTPD
import Dispatch
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
/// **Updates.** ``publishChanges(from:)`` sends each stream the whole board first, then
/// the tiles that changed, coalesced (``BoardUpdate``); a reader too far behind gets the whole
/// board again (``EventBroadcast``). A stream sends `retry: 1000` first, so a browser
/// reconnects a second after losing the gateway, and a comment every ``keepAliveSeconds`` when
/// nothing changes, so a vanished reader is noticed.
///
/// **Access.** With a token (``WebBoardConfiguration``) every request must carry it
/// (`?token=…` or `Authorization: Bearer …`); others get 401. Every request is a `GET` (or
/// `HEAD`) but one: `POST /api/sign-in` assigns a new strap to a participant
/// (``BoardFeed/signIn(strap:participant:keep:)``), accepted only from the board's own page on
/// its own address (``BoardSignInRequest``).
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
    /// The port the daemon listens on, once started (the chosen one for port 0): what a
    /// sign-in's `Host` must name.
    private let boundPort = Atomic<UInt16>(0)

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
            UInt32(Self.connectionLimit), boardAccessHandler, context, boardRequestCompleted)
        else {
            throw WebBoardError("cannot listen on \(configuration.listen) (in use, or not an address of this machine)")
        }
        daemon.withLock { $0 = DaemonHandle(pointer: pointer, mhd: entryPoints) }
        let port = shim_mhd_bound_port(entryPoints.getDaemonInfo, pointer)
        boundPort.store(port, ordering: .relaxed)
        let address = "http://\(configuration.listen.octets.map(String.init).joined(separator: ".")):\(port)"
        logger.notice(
            (router == nil ? "metrics at \(address)/metrics" : "live board at \(address)/"
                + (metrics == nil ? "" : ", metrics at \(address)/metrics"))
                + (token == nil ? "" : " (token required)"))
        return port
    }

    /// Hands `snapshot` to every event stream as the whole board.
    public func publish(_ snapshot: BoardSnapshot) {
        publish(BoardUpdate(whole: snapshot), whole: snapshot)
    }

    private func publish(_ update: BoardUpdate, whole snapshot: BoardSnapshot) {
        do {
            let change = try BoardRouter.encodeEvent(update)
            let logger = logger
            let whole: @Sendable () -> [UInt8]
            if update.full {
                whole = { change }
            } else {
                whole = {
                    do {
                        return try BoardRouter.encodeEvent(BoardUpdate(whole: snapshot))
                    } catch {
                        logger.error("cannot encode the board: \(error)")
                        return []
                    }
                }
            }
            broadcast.publish(whole: whole, change: change)
        } catch {
            logger.error("cannot encode the board: \(error)")
        }
    }

    /// Publishes the board's changes until cancelled: the whole board first, then, after every
    /// reading (``BoardFeed/setChangeHandler(_:)``) and at least every
    /// ``BoardUpdate/refreshSeconds``, the tiles that changed (``BoardDiff``). Readings arriving
    /// within ``BoardUpdate/coalescingMilliseconds`` of the first go out in one event.
    ///
    /// The loop runs on a thread of its own, timed by `pthread_cond_timedwait` on
    /// CLOCK_MONOTONIC as the streams' keep-alives are, not on Swift's cooperative pool and its
    /// timers: on a VM with one starved processor the pool's timers fired so late that the
    /// stream sent nothing for 117 s while the board itself (`GET /api/board`) and the
    /// keep-alives were current.
    public func publishChanges(from board: any BoardFeed) async throws {
        let loop = PublishLoop()
        board.setChangeHandler { loop.wake() }
        defer { board.setChangeHandler(nil) }
        let queue = DispatchQueue(label: "healthgate.web.publisher")
        await withTaskCancellationHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                queue.async { [self] in
                    var diff = BoardDiff()
                    let first = board.snapshot()
                    publish(diff.whole(first), whole: first)
                    while loop.next() {
                        let snapshot = board.snapshot()
                        if let update = diff.change(to: snapshot) { publish(update, whole: snapshot) }
                    }
                    finished.resume()
                }
            }
        } onCancel: {
            loop.stop()
        }
        try Task.checkCancellation()
    }

    /// Publishes the whole board every `interval` until cancelled: the fixed tick the gateway
    /// used before ``publishChanges(from:)``, kept as the board benchmark's comparison.
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

    fileprivate func handle(
        _ connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>?, requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> MHD_Result {
        // Set before the daemon started, so always there while it runs.
        guard let mhd = mhd.withLock({ $0 }) else { return .NO }
        if method == "POST", url == "/api/sign-in", router != nil {
            return handleSignIn(connection, upload: upload, uploadSize: uploadSize, requestState: requestState, mhd)
        }
        guard method == "GET" || method == "HEAD" else {
            let allowed = url == "/api/sign-in" && router != nil ? "POST" : "GET, HEAD"
            return queue(.text(405, "text/plain", "only \(allowed)", headers: ["Allow": allowed]), on: connection, mhd)
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

    /// `POST /api/sign-in`. libmicrohttpd calls the handler once with the headers (the body's
    /// state is made then, and released by ``boardRequestCompleted`` however the request ends),
    /// then once per piece of the body, then once more with none: the sign-in is made then.
    /// Headers are checked at the first call, so a refused request's body is never read.
    private func handleSignIn(
        _ connection: OpaquePointer, upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>?,
        requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ mhd: MicroHTTPDEntryPoints
    ) -> MHD_Result {
        guard let requestState, let uploadSize else { return .NO }
        func refuse(_ refusal: BoardSignInRequest.Refusal) -> MHD_Result {
            logger.warning("\(refusal.message)")
            return queue(Self.json(refusal.status, ["error": .string(refusal.message)]), on: connection, mhd)
        }
        guard let pointer = requestState.pointee else {
            if let token, !authorized(connection, token: token, mhd) {
                refused.add(1, ordering: .relaxed)
                return queue(
                    .text(401, "text/plain", "this board needs its token", headers: ["WWW-Authenticate": "Bearer"]), on: connection, mhd)
            }
            func header(_ name: String) -> String? {
                mhd.lookupConnectionValue(connection, .HEADER_KIND, name).map { String(cString: $0) }
            }
            do {
                try BoardSignInRequest.checkHeaders(
                    .init(host: header("Host"), origin: header("Origin"), contentType: header("Content-Type")),
                    listen: configuration.listen, port: boundPort.load(ordering: .relaxed))
            } catch {
                return refuse(error)
            }
            if let length = header("Content-Length").flatMap(Int.init), length > BoardSignInRequest.maximumBodyBytes {
                return refuse(.init(status: 413, message: "sign-in refused: the body is larger than \(BoardSignInRequest.maximumBodyBytes) bytes"))
            }
            requestState.pointee = Unmanaged.passRetained(PostBody()).toOpaque()
            return .YES
        }
        let body = Unmanaged<PostBody>.fromOpaque(pointer).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let upload, body.bytes.count <= BoardSignInRequest.maximumBodyBytes {
                let count = min(uploadSize.pointee, BoardSignInRequest.maximumBodyBytes + 1 - body.bytes.count)
                upload.withMemoryRebound(to: UInt8.self, capacity: count) { body.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
            }
            // Everything is taken (what is past the limit is dropped; the limit refuses the request).
            uploadSize.pointee = 0
            return .YES
        }
        let request: BoardSignInRequest
        do {
            request = try BoardSignInRequest.decode(body.bytes)
        } catch {
            return refuse(error)
        }
        guard let board = router?.board else { return .NO }
        let outcome = BoardRouter.wait { () async throws -> Participant in
            try await board.signIn(strap: request.strap, participant: request.participant, keep: request.keep)
        }
        switch outcome {
        case .success(let participant):
            logger.info("signed in \(request.strap) → \(participant.name) from the board" + (request.keep ? " (kept after the class)" : ""))
            return queue(Self.json(200, [
                "strap": .string(request.strap), "participant": .string(participant.name),
                "devices": .array(participant.devices.map(JSONValue.string)), "keep": .bool(request.keep),
            ]), on: connection, mhd)
        case .failure(let error as WorkoutError) where error.code == .persistence:
            return refuse(.init(status: 503, message: "sign-in not stored: \(error.message)"))
        case .failure(let error as WorkoutError):
            return refuse(.init(status: 400, message: "sign-in refused: \(error.message)"))
        case .failure(let error):
            return refuse(.init(status: 500, message: "sign-in failed: \(error)"))
        }
    }

    /// A JSON answer.
    static func json(_ status: Int, _ object: [String: JSONValue]) -> BoardResponse {
        let body = (try? BoardRouter.encode(JSONValue.object(object))).map(Array.init) ?? Array("{}".utf8)
        return BoardResponse(status: status, contentType: "application/json", body: body)
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
            case .update(let sequence, let payloads):
                seen = sequence
                pending = payloads.flatMap { Array("data: ".utf8) + $0 + Array("\n\n".utf8) }
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

private let boardAccessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, upload, uploadSize, state in
    guard let context, let connection, let url, let method else { return .NO }
    let server = Unmanaged<BoardServer>.fromOpaque(context).takeUnretainedValue()
    return server.handle(
        connection, url: String(cString: url), method: String(cString: method), upload: upload, uploadSize: uploadSize,
        requestState: state)
}

/// A request ended: the body state a sign-in made (``PostBody``), if still held, is released.
private let boardRequestCompleted: MHD_RequestCompletedCallback = { _, _, state, _ in
    guard let state, let pointer = state.pointee else { return }
    state.pointee = nil
    Unmanaged<PostBody>.fromOpaque(pointer).release()
}

/// A sign-in's body as it arrives, owned by its request (released when the request completes).
/// Used by one connection thread at a time.
final class PostBody {
    var bytes: [UInt8] = []
}

private let eventStreamReader: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer else { return -1 }
    return Unmanaged<EventStream>.fromOpaque(context).takeUnretainedValue().read(into: buffer, capacity: capacity)
}

private let eventStreamRelease: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<EventStream>.fromOpaque(context).release()
}

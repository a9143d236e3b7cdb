import FoundationEssentials
public import LinuxSystem
public import GatewayRuntime

/// The daemon's control socket: a Unix-domain stream socket, mode 0660, one JSON request and one
/// JSON response per line (see ``ControlRequest``).
///
/// The server is the dispatch: it decodes each request line, runs the handler of its command
/// and encodes the response. Serving the socket (accepting, non-blocking reads and writes, line
/// framing, the limits) is LinuxSystem's `UnixLineServer`, on its own serial queue; its events
/// are logged here, as the control socket's.
///
/// Limits (``Limits``): a request line longer than `maximumRequestBytes` gets an error response
/// and the connection is closed; a connection with no traffic for `idleTimeout` (and no request
/// in flight) is closed; beyond `maximumClients` connections a newcomer gets a one-line "busy"
/// error and is closed. When accept(2) fails for lack of descriptors (EMFILE, ENFILE) or memory,
/// the server stops accepting for `acceptPause` at a time instead of spinning, and logs the
/// condition once per episode (at most once a minute).
///
/// Sendable: every property is immutable, and the line server is an actor.
public final class ControlServer: Sendable {
    /// The bounds a control server enforces; the defaults suit a gateway.
    public typealias Limits = UnixLineServer.Limits

    /// The socket file.
    public var path: String { server.path }
    private let server: UnixLineServer
    private let logger: Logger

    /// A server for `path` answering `handlers` (keyed by command). Nothing happens until
    /// ``start()``.
    public init(path: String, handlers: [String: ControlHandler], logger: Logger, limits: Limits = Limits()) {
        self.logger = logger
        // The error responses the socket sends on its own, before it closes a connection.
        let closingLines = UnixLineServer.ClosingLines(
            busy: Self.encode(ControlResponse(ok: false, error: "busy: \(limits.maximumClients) clients are connected; try again")),
            tooLong: Self.encode(ControlResponse(
                ok: false, error: "request line longer than \(limits.maximumRequestBytes) bytes; closing the connection")),
            idle: Self.encode(ControlResponse(ok: false, error: "idle for \(limits.idleTimeout); closing the connection")))
        self.server = UnixLineServer(
            path: path, mode: 0o660, queueLabel: "healthgate.control", limits: limits, closingLines: closingLines,
            onEvent: { event in Self.log(event, path: path, limits: limits, logger: logger) },
            handler: { line in Self.encode(await Self.handle(line: line, handlers: handlers)) })
    }

    /// Binds the socket (replacing a stale one) and starts accepting.
    /// - Throws: ``ControlSocketError`` when the directory or socket cannot be made, or another
    ///   daemon is already listening (`EADDRINUSE`).
    public func start() async throws(ControlSocketError) {
        do {
            try await server.start()
        } catch {
            throw ControlSocketError(error)
        }
        logger.info("control socket listening on \(path)")
    }

    /// Stops accepting, closes every connection (cancelling requests in flight) and removes the
    /// socket file. Call it once; it waits for the socket's queue, so not from a handler.
    public func stop() {
        server.stop()
    }

    /// Removes the socket file without touching the queue or logging: for a forced exit, which
    /// must not wait for anything. A failure is left for the next start, which replaces a stale
    /// socket file.
    public func removeSocketFile() {
        server.removeSocketFile()
    }

    // MARK: Dispatch

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

    /// The response as JSON, without a newline; a result that cannot be encoded becomes an error
    /// response.
    private static func encode(_ response: ControlResponse) -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(response))
        } catch {
            let fallback = ControlResponse(ok: false, error: "the response could not be encoded: \(error)")
            return Array((try? JSONEncoder().encode(fallback)) ?? Data(#"{"ok":false}"#.utf8))
        }
    }

    /// The line server's events, as the control socket's log lines.
    private static func log(_ event: UnixLineServer.Event, path: String, limits: Limits, logger: Logger) {
        switch event {
        case .acceptFailing(let error):
            logger.warning(
                "control socket cannot accept: \(error); pausing accepts for \(limits.acceptPause) at a time "
                    + "until it can (said once)")
        case .acceptRecovered(let pauses):
            logger.notice("control socket accepting again (\(String(count: pauses, "pause")) while it could not)")
        case .refusedBusy(let refusedSoFar):
            logger.warning(
                "control socket has \(limits.maximumClients) clients; refusing new ones (\(refusedSoFar) refused so far)")
        case .socketFileNotRemoved(let error):
            logger.warning("cannot remove the control socket \(path): \(error)")
        }
    }
}

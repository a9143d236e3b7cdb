import AsyncPrimitives
import FoundationEssentials
import LinuxSystem

/// Sends requests to a running daemon's control socket.
///
/// Each call connects, sends one line, reads one line and closes. The blocking socket I/O runs on
/// a queue of its own (``AsyncPrimitives/QueueExecutor/run(_:)``), never on the cooperative pool.
public struct ControlClient: Sendable {
    /// The daemon's socket.
    public let path: String
    /// How long to wait for the daemon's answer.
    public var timeout: Duration

    /// How long a client waits for the daemon's answer unless told otherwise (the CLI's
    /// `--timeout` default).
    public static let defaultTimeout = Duration.seconds(10)

    /// A client for the socket at `path`.
    public init(path: String, timeout: Duration = defaultTimeout) {
        self.path = path
        self.timeout = timeout
    }

    /// Sends a request and returns the daemon's response.
    /// - Throws: ``ControlSocketError`` (``ControlSocketError/meansNoDaemon`` when no daemon runs,
    ///   ``ControlSocketError/meansUnanswered`` when it took the request and did not answer in time),
    ///   or a DecodingError for a malformed answer.
    public func send(_ request: ControlRequest) async throws -> ControlResponse {
        let path = path
        let timeoutMilliseconds = Int32(clamping: timeout.components.seconds * 1000
            + timeout.components.attoseconds / 1_000_000_000_000_000)
        return try await QueueExecutor(label: "healthgate.control-client").run {
            try Self.exchange(request, path: path, timeoutMilliseconds: timeoutMilliseconds)
        }
    }

    private static func exchange(_ request: ControlRequest, path: String, timeoutMilliseconds: Int32) throws -> ControlResponse {
        let socket: FileDescriptor
        do {
            socket = try UnixStreamSocket.connect(to: path)
        } catch {
            throw ControlSocketError(path: path, operation: "connect", error)
        }
        defer { socket.close() }
        var line = try JSONEncoder().encode(request)
        line.append(UInt8(ascii: "\n"))
        do {
            try UnixStreamSocket.sendAll(socket, Array(line), deadline: .now + .seconds(5))
        } catch {
            throw ControlSocketError(path: path, operation: "send to", error)
        }
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeoutMilliseconds))
        while !received.contains(UInt8(ascii: "\n")) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw ControlSocketError(path: path, operation: ControlSocketError.unanswered, .timedOut) }
            do {
                guard try UnixStreamSocket.waitReadable(socket, timeout: left) else { continue }
            } catch {
                throw ControlSocketError(path: path, operation: "poll", error)
            }
            let chunk: [UInt8]
            do {
                chunk = try socket.read(maximum: 4096)
            } catch {
                throw ControlSocketError(path: path, operation: "read from", error)
            }
            guard !chunk.isEmpty else { throw ControlSocketError(path: path, operation: "connection closed by", .connectionReset) }
            received.append(contentsOf: chunk)
        }
        let end = received.firstIndex(of: UInt8(ascii: "\n")) ?? received.endIndex
        return try JSONDecoder().decode(ControlResponse.self, from: Data(received[..<end]))
    }
}

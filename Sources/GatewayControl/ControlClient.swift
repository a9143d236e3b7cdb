import Foundation
import LinuxSystem
import SampleBus

#if canImport(Glibc)
    import Glibc
#endif

/// Sends requests to a running daemon's control socket.
///
/// Each call connects, sends one line, reads one line and closes. The blocking socket I/O runs on
/// a Dispatch queue, never on the cooperative pool.
public struct ControlClient: Sendable {
    /// The daemon's socket.
    public let path: String
    /// How long to wait for the daemon's answer.
    public var timeout: Duration

    /// A client for the socket at `path`.
    public init(path: String, timeout: Duration = .seconds(10)) {
        self.path = path
        self.timeout = timeout
    }

    /// Sends a request and returns the daemon's response.
    /// - Throws: ``ControlSocketError`` (``ControlSocketError/meansNoDaemon`` when no daemon runs),
    ///   or a DecodingError for a malformed answer.
    public func send(_ request: ControlRequest) async throws -> ControlResponse {
        let path = path
        let timeoutMilliseconds = Int32(clamping: timeout.components.seconds * 1000
            + timeout.components.attoseconds / 1_000_000_000_000_000)
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try Self.exchange(request, path: path, timeoutMilliseconds: timeoutMilliseconds)
                })
            }
        }
    }

    private static func exchange(_ request: ControlRequest, path: String, timeoutMilliseconds: Int32) throws -> ControlResponse {
        let socket = try UnixSocket.connect(path: path)
        defer { socket.close() }
        guard let fd = socket.rawValue else { throw ControlSocketError(path: path, operation: "connect", errno: EBADF) }
        var line = try JSONEncoder().encode(request)
        line.append(UInt8(ascii: "\n"))
        let sent = line.withUnsafeBytes { bytes in
            Result { () throws(Errno) in try UnixSocket.writeAll(fd, bytes, deadline: .now + .seconds(5)) }
        }
        if case .failure(let error) = sent {
            throw ControlSocketError(path: path, operation: "send to", errno: error.rawValue)
        }
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeoutMilliseconds))
        while !received.contains(UInt8(ascii: "\n")) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw ControlSocketError(path: path, operation: "no answer from", errno: ETIMEDOUT) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready: Int32
            do {
                ready = try Errno.retryingInterrupts {
                    poll(&descriptor, 1, Int32(clamping: left.components.seconds * 1000 + 1))
                }
            } catch {
                throw ControlSocketError(path: path, operation: "poll", errno: error.rawValue)
            }
            guard ready > 0 else { continue }
            let chunk: [UInt8]
            do {
                chunk = try socket.read(maximum: 4096)
            } catch {
                throw ControlSocketError(path: path, operation: "read from", errno: error.rawValue)
            }
            guard !chunk.isEmpty else { throw ControlSocketError(path: path, operation: "connection closed by", errno: ECONNRESET) }
            received.append(contentsOf: chunk)
        }
        let end = received.firstIndex(of: UInt8(ascii: "\n")) ?? received.endIndex
        return try JSONDecoder().decode(ControlResponse.self, from: Data(received[..<end]))
    }
}

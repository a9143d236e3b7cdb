public import Foundation
public import SampleBus

#if canImport(Glibc)
    import Glibc
#endif

/// Sends requests to a running daemon's control socket.
///
/// Each call connects, sends one line, reads one line and closes. The blocking socket I/O runs on
/// a Dispatch queue, never on the cooperative pool.
public struct ControlClient: Sendable {
    public let path: String
    /// How long to wait for the daemon's answer.
    public var timeout: Duration

    public init(path: String, timeout: Duration = .seconds(10)) {
        self.path = path
        self.timeout = timeout
    }

    /// Sends a request and returns the daemon's response.
    /// - Throws: ``ControlSocketError`` (``ControlSocketError/meansNoDaemon`` when no daemon runs),
    ///   or a DecodingError for a malformed answer.
    public func send(_ request: ControlRequest) async throws -> ControlResponse {
        let path = path
        let timeoutMilliseconds = Int32(timeout.components.seconds * 1000)
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try Self.exchange(request, path: path, timeoutMilliseconds: timeoutMilliseconds)
                })
            }
        }
    }

    private static func exchange(_ request: ControlRequest, path: String, timeoutMilliseconds: Int32) throws -> ControlResponse {
        let fd = try UnixSocket.connect(path: path)
        defer { close(fd) }
        var line = try JSONEncoder().encode(request)
        line.append(UInt8(ascii: "\n"))
        let sent = line.withUnsafeBytes { UnixSocket.writeAll(fd, $0, deadline: .now() + 5) }
        guard sent else { throw ControlSocketError(path: path, operation: "send to", errno: errno) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(UInt8(ascii: "\n")) {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { throw ControlSocketError(path: path, operation: "no answer from", errno: ETIMEDOUT) }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw ControlSocketError(path: path, operation: "connection closed by", errno: ECONNRESET) }
            received.append(contentsOf: buffer[0..<count])
        }
        let end = received.firstIndex(of: UInt8(ascii: "\n")) ?? received.endIndex
        return try JSONDecoder().decode(ControlResponse.self, from: Data(received[..<end]))
    }
}

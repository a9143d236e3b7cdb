import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A raw client of the daemon's control socket for tests that misbehave on purpose: connect and
/// stay silent, send half a line, flood a line, or never read.
final class TestSocket: @unchecked Sendable {
    // The descriptor is written once in init and closed once by `close()`; tests use one socket
    // from one task, except `flood`, which only sends.
    private(set) var fd: Int32

    /// Connects to `path` (blocking); throws the errno text when that fails.
    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketFailure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let text = String(cString: strerror(errno))
            Glibc.close(fd)
            throw SocketFailure("connect \(path): \(text)")
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends all of `bytes` (blocking). Returns false when the daemon closed the connection first.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads until a newline or end of file, or until `timeout` passes (then returns what came).
    func readLine(timeout: Duration = .seconds(10)) -> String? {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while !received.contains(UInt8(ascii: "\n")), ContinuousClock.now < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 50)
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        guard !received.isEmpty else { return nil }
        let end = received.firstIndex(of: UInt8(ascii: "\n")) ?? received.endIndex
        return String(decoding: received[..<end], as: UTF8.self)
    }

    /// Whether the daemon closed the connection: end of file (or a reset) is readable now.
    func isClosedByPeer(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            var byte: UInt8 = 0
            let count = recv(fd, &byte, 1, 0)
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { return true }
        }
        return false
    }

    /// One request over a fresh connection: the round trip the daemon's answer takes, and the answer.
    static func roundTrip(path: String, _ request: String) throws -> (duration: Duration, answer: String?) {
        let start = ContinuousClock.now
        let socket = try TestSocket(path: path)
        _ = socket.send(request + "\n")
        let answer = socket.readLine()
        return (ContinuousClock.now - start, answer)
    }
}

/// A test socket could not be made.
struct SocketFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

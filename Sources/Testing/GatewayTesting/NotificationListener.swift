import AsyncPrimitives
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket bound as systemd binds its notification socket (`$NOTIFY_SOCKET`), which
/// collects every notification a process sends it: the tests' systemd for `Type=notify`.
///
/// Bound at a path, or in the abstract namespace for a name starting with `@` (as in
/// `$NOTIFY_SOCKET`). A thread of its own reads the datagrams until ``close()``.
public final class NotificationListener: Sendable {
    /// What to put in `$NOTIFY_SOCKET`.
    public let address: String
    private let descriptor: Int32
    private let received = AsyncCondition<[String]>([])
    private let closed = AsyncCondition(false)

    /// Binds `address` and starts reading.
    /// - Throws: ``ListenerFailure`` naming the call that failed.
    public init(address: String) throws {
        self.address = address
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ListenerFailure("socket: \(String(cString: strerror(errno)))") }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: socketAddress.sun_path) else {
            Glibc.close(descriptor)
            throw ListenerFailure("\(address) is too long for a socket address")
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let fd = descriptor
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let text = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw ListenerFailure("bind \(address): \(text)")
        }
        // A read wakes at least every 100 ms, so the thread sees close() soon.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [received, closed] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !closed.value {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count >= 0 else { continue }
                let message = String(decoding: buffer[..<count], as: UTF8.self)
                received.update { $0.append(message) }
            }
            Glibc.close(fd)
        }
        thread.start()
    }

    /// Every notification received so far, in order.
    public var messages: [String] { received.value }

    /// Waits until the notifications received satisfy `predicate`, or fails after `timeout`.
    public func wait(
        timeout: Duration = .seconds(30), _ what: String, until predicate: @escaping @Sendable ([String]) -> Bool
    ) async throws {
        let outcome = try await race(sleep: { try await Task.sleep(for: timeout) }) {
            try await self.received.wait(until: predicate)
        }
        if case .timedOut = outcome {
            throw WaitTimeout(what: "\(what) (notifications so far: \(messages))")
        }
    }

    /// Stops reading; the socket closes on the reading thread.
    public func close() {
        closed.set(true)
    }

    deinit { close() }

    /// The socket could not be set up.
    public struct ListenerFailure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}

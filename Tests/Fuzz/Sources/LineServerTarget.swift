import Dispatch
import Foundation
import LinuxSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The `line-server` target: the control socket's line server (``UnixLineServer``, an echo
/// handler, a request limit of ``limit`` bytes) on a real Unix socket in a scratch directory,
/// started once for the run. Each input is one client: the first byte says how it sends the rest
/// (in chunks of 1 to 64 bytes) and how it leaves (half-closed, reading every answer, or gone
/// after a point of its sending without reading anything); then a second client checks that the
/// server still answers.
///
/// A client that reads gets exactly what the server's contract promises: one echo line per
/// non-blank request line, in order, until the first line over the limit, which gets the closing
/// line and ends the connection; a request left without its newline gets nothing.
enum LineServerTarget {
    static let limit = 64
    private static let tooLong = Array("too long".utf8)

    /// The server and its socket's path, made on the first input.
    private static let server: (UnixLineServer, String) = {
        let directory = NSTemporaryDirectory() + "healthgate-fuzz-line-server-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/s.sock"
        let server = UnixLineServer(
            path: path, queueLabel: "fuzz-line-server", limits: .init(maximumRequestBytes: limit),
            closingLines: .init(busy: Array("busy".utf8), tooLong: tooLong, idle: Array("idle".utf8))
        ) { line in line }
        // The fuzzer's thread is no task: it waits here, once, for the actor to listen.
        let started = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        Task {
            do { try await server.start() } catch { failure.withLock { $0 = "\(error)" } }
            started.signal()
        }
        started.wait()
        if let message = failure.withLock({ $0 }) { FuzzTarget.check(false, "the line server does not start: \(message)") }
        return (server, path)
    }()

    static func run(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        let chunk = Int(first & 0x3F) + 1
        let (_, path) = server
        if first & 0x40 == 0 {
            let received = exchange(path: path, body: body, chunk: chunk, leaveAfter: nil)
            FuzzTarget.check(received == expected(body), "answers \(received) for the requests \(body)")
        } else {
            // Gone without reading, after a point of the input the byte after the first picks.
            let point = body.isEmpty ? 0 : Int(body[0]) % (body.count + 1)
            _ = exchange(path: path, body: body, chunk: chunk, leaveAfter: point)
        }
        FuzzTarget.check(
            exchange(path: path, body: Array("ping\n".utf8), chunk: 5, leaveAfter: nil) == Array("ping\n".utf8),
            "the server no longer answers after a client left")
    }

    /// What a client that sends `body` and then half-closes reads back.
    static func expected(_ body: [UInt8]) -> [UInt8] {
        var answers: [UInt8] = []
        var rest = body[...]
        while let end = rest.firstIndex(of: UInt8(ascii: "\n")) {
            let line = rest[..<end]
            if line.count > limit { return answers + tooLong + [UInt8(ascii: "\n")] }
            if !line.allSatisfy({ $0 == 32 || $0 == 13 }) { answers += line + [UInt8(ascii: "\n")] }
            rest = rest[rest.index(after: end)...]
        }
        // The server reads one byte past the limit before it knows a line is too long.
        return rest.count > limit ? answers + tooLong + [UInt8(ascii: "\n")] : answers
    }

    /// One client: sends `body` in chunks of `chunk` bytes; with `leaveAfter`, closes once that
    /// many bytes are sent and reads nothing; else half-closes and reads until the server closes.
    private static func exchange(path: String, body: [UInt8], chunk: Int, leaveAfter: Int?) -> [UInt8] {
        let socket: FileDescriptor
        do {
            socket = try UnixStreamSocket.connect(to: path)
        } catch {
            FuzzTarget.check(false, "cannot connect to the line server: \(error)")
            return []
        }
        defer { socket.close() }
        let deadline = ContinuousClock.now + .seconds(5)
        var sent = 0
        while sent < (leaveAfter ?? body.count) {
            let end = min(sent + chunk, leaveAfter ?? body.count)
            do {
                try UnixStreamSocket.sendAll(socket, Array(body[sent..<end]), deadline: deadline)
            } catch {
                // The server ended the connection (an over-long line): read what it answered.
                break
            }
            sent = end
        }
        if leaveAfter != nil { return [] }
        if let descriptor = socket.rawValue { _ = shutdown(descriptor, Int32(SHUT_WR)) }
        var received: [UInt8] = []
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero, (try? UnixStreamSocket.waitReadable(socket, timeout: left)) == true else {
                FuzzTarget.check(false, "the line server did not close the connection within 5 s")
                return received
            }
            guard let bytes = try? socket.read(maximum: 4096), !bytes.isEmpty else { return received }
            received += bytes
        }
    }
}

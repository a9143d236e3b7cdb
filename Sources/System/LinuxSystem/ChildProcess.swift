#if canImport(Glibc)
import Glibc
#endif
public import Dispatch
import CLinuxSystem
import Synchronization

/// A program the gateway runs as a child (an adapter of the `exec` source), connected by three
/// Unix stream sockets: its stdin, stdout and stderr.
///
/// Sockets rather than pipes: the gateway writes to the child's stdin with `MSG_NOSIGNAL`, so a
/// child that exited gives `EPIPE`, never a SIGPIPE that would end the gateway; the child sees
/// ordinary descriptors (`read`, `write`, line buffering) and gets EPIPE or SIGPIPE itself when
/// the gateway is gone, and its stdin ends.
///
/// The child leads a process group of its own, so ``signal(_:)`` reaches whatever it started;
/// it inherits no descriptor of the gateway's and no signal disposition. Ownership: the three
/// descriptors belong to this object; ``exit()`` reaps the child (waitpid on a queue of its own,
/// never the cooperative pool). Thread-safe.
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Hashable, Sendable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let number): "was killed by signal \(number) (\(ChildProcess.signalName(number)))"
            }
        }
    }

    /// The user a child runs as (the gateway must be root to change it).
    public struct User: Hashable, Sendable {
        public var uid: UInt32
        public var gid: UInt32
        /// The supplementary groups, resolved before the fork.
        public var groups: [UInt32]

        public init(uid: UInt32, gid: UInt32, groups: [UInt32]) {
            self.uid = uid
            self.gid = gid
            self.groups = groups
        }

        /// The user named `name` (or a numeric uid) from the password database, with its groups.
        /// - Throws: ``Errno/noSuchFile`` when there is no such user.
        public static func named(_ name: String) throws(Errno) -> User {
            var entry = passwd()
            var buffer = [CChar](repeating: 0, count: 16_384)
            var result: UnsafeMutablePointer<passwd>?
            var code = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
            if result == nil, let uid = UInt32(name) {
                code = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
            }
            guard code == 0 else { throw Errno(rawValue: code) }
            guard result != nil else { throw .noSuchFile }
            var count: Int32 = 64
            var groups = [gid_t](repeating: 0, count: Int(count))
            if getgrouplist(entry.pw_name, entry.pw_gid, &groups, &count) < 0 {
                groups = [gid_t](repeating: 0, count: Int(count))
                _ = getgrouplist(entry.pw_name, entry.pw_gid, &groups, &count)
            }
            return User(uid: entry.pw_uid, gid: entry.pw_gid, groups: Array(groups.prefix(Int(max(count, 0)))))
        }
    }

    /// The child's process id (and its process group's).
    public let pid: Int32
    /// The gateway's end of the child's stdin.
    public let input: FileDescriptor
    /// The gateway's end of the child's stdout.
    public let output: FileDescriptor
    /// The gateway's end of the child's stderr.
    public let errors: FileDescriptor
    private let reaped = Mutex<Termination?>(nil)
    private let waiter = DispatchQueue(label: "healthgate.child-process.wait")

    /// Starts `executable` (a path: resolve a bare name with ``resolve(_:path:)`` first) with
    /// `arguments` (argv[0] included) and `environment` (`NAME=value` entries), in `directory`
    /// (nil: the gateway's), as `user` (nil: the gateway's).
    /// - Throws: the `Errno` of the socket, the fork, or of the child's own preparation or exec
    ///   (`ENOENT`, `EACCES`, `EPERM` for a user it may not become).
    public init(
        executable: String, arguments: [String], environment: [String], directory: String? = nil, user: User? = nil
    ) throws(Errno) {
        var pairs: [(gateway: Int32, child: Int32)] = []
        do {
            for _ in 0..<3 { pairs.append(try Self.socketPair()) }
        } catch {
            for pair in pairs { _ = Glibc.close(pair.gateway); _ = Glibc.close(pair.child) }
            throw error
        }
        defer { for pair in pairs { _ = Glibc.close(pair.child) } }
        let pid = Self.withCStrings(arguments) { argv in
            Self.withCStrings(environment) { envp in
                let groups = (user?.groups ?? []).map { gid_t($0) }
                return groups.withUnsafeBufferPointer { groupPointer in
                    hg_spawn(
                        executable, argv, envp, directory, pairs[0].child, pairs[1].child, pairs[2].child,
                        user == nil ? 0 : 1, uid_t(user?.uid ?? 0), gid_t(user?.gid ?? 0), groupPointer.baseAddress,
                        Int32(groups.count))
                }
            }
        }
        guard pid > 0 else {
            let error = Errno.lastError
            for pair in pairs { _ = Glibc.close(pair.gateway) }
            throw error
        }
        self.pid = pid
        input = FileDescriptor(owning: pairs[0].gateway)
        output = FileDescriptor(owning: pairs[1].gateway)
        errors = FileDescriptor(owning: pairs[2].gateway)
        // The child only reads its stdin socket and writes the other two: half-close the
        // unused directions, so that a read of stdout ends when the child's last writer does.
        _ = shutdown(pairs[0].gateway, Int32(SHUT_RD))
        _ = shutdown(pairs[1].gateway, Int32(SHUT_WR))
        _ = shutdown(pairs[2].gateway, Int32(SHUT_WR))
    }

    deinit {
        input.close()
        output.close()
        errors.close()
    }

    /// Sends `number` to the child's process group. A child already reaped is not signalled
    /// (its pid may be another process's by now).
    public func signal(_ number: Int32) {
        guard reaped.withLock({ $0 }) == nil else { return }
        _ = hg_kill_group(pid, number)
    }

    /// SIGTERM.
    public static let terminate = hg_signal_terminate
    /// SIGKILL.
    public static let kill = hg_signal_kill

    /// Ends the child's stdin: it reads end of file.
    public func closeInput() {
        if let fd = input.rawValue { _ = shutdown(fd, Int32(SHUT_WR)) }
    }

    /// Waits for the child to end and reaps it. Cancellation does not cut the wait short (a child
    /// is always reaped); signal the child first to end it.
    public func exit() async -> Termination {
        if let known = reaped.withLock({ $0 }) { return known }
        return await withCheckedContinuation { continuation in
            waiter.async { [self] in
                if let known = reaped.withLock({ $0 }) {
                    continuation.resume(returning: known)
                    return
                }
                var code: Int32 = -1
                var number: Int32 = -1
                let termination: Termination =
                    hg_wait_child(pid, &code, &number) == 0 ? (number >= 0 ? .signalled(number) : .exited(code)) : .exited(-1)
                reaped.withLock { $0 = termination }
                continuation.resume(returning: termination)
            }
        }
    }

    /// The child's end, once ``exit()`` reaped it; nil while it runs.
    public var termination: Termination? { reaped.withLock { $0 } }

    /// Reads up to `maximum` bytes of `descriptor` (``output`` or ``errors``), blocking, on `queue`
    /// (never the cooperative pool): empty at end of file.
    /// - Throws: the read's `Errno`.
    public static func read(_ descriptor: FileDescriptor, maximum: Int, on queue: DispatchQueue) async throws(Errno) -> [UInt8] {
        let result: Result<[UInt8], Errno> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(Errno) {
                    continuation.resume(returning: .success(try descriptor.read(maximum: maximum)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Sends as much of `bytes` to the child's stdin as its socket takes now (`EAGAIN` when
    /// nothing fits, `EPIPE` when the child closed it): never blocks, never raises SIGPIPE.
    public func writeSome(_ bytes: some Collection<UInt8>) throws(Errno) -> Int {
        try UnixStreamSocket.sendSome(input, bytes)
    }

    /// The executable `name` names: itself when it holds a `/`, else the first regular executable
    /// file of that name in `path`'s directories (a `PATH` value). nil when there is none.
    public static func resolve(_ name: String, path: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = "\(directory)/\(name)"
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// The gateway's effective user id (0: root, which may start a child as another user).
    public static var currentUserID: UInt32 { geteuid() }

    /// The usual name of signal `number` (`SIGTERM`), or `signal N`.
    public static func signalName(_ number: Int32) -> String {
        let names: [Int32: String] = [
            1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
            11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 31: "SIGSYS",
        ]
        return names[number] ?? "signal \(number)"
    }

    private static func socketPair() throws(Errno) -> (gateway: Int32, child: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw Errno.lastError
        }
        return (fds[0], fds[1])
    }

    /// Calls `body` with a NULL-terminated array of C strings copied from `strings`.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

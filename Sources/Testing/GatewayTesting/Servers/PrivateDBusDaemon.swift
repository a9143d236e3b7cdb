public import Foundation
import Glibc
import Synchronization

/// A private dbus-daemon for one test, listening on a socket in a temporary directory, with a
/// policy that lets every client own any name and call anyone: the D-Bus tests' bus, and the bus
/// bluetoothd's stand-in (python3-dbusmock) serves in the BlueZ tests. A hard requirement
/// (`apt-get install dbus`): ``init()`` throws ``Missing`` without it.
public final class PrivateDBusDaemon: Sendable {
    static let dbusDaemon = "/usr/bin/dbus-daemon"
    /// The bus's policy, shared with the benchmarks' private bus (Benchmarks/advertising-straps.py);
    /// the address is given on the command line.
    static let configuration = HealthgateExecutable.packageRoot().appendingPathComponent("Tests/Fixtures/private-bus.conf")

    public let directory: URL
    /// The bus's address (`unix:path=…`), for a D-Bus connection or `DBUS_SYSTEM_BUS_ADDRESS`.
    public let address: String
    private let daemon: Mutex<Process>

    /// Starts the daemon and returns once it accepts connections.
    public init(prefix: String = "healthgate-dbus") async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.dbusDaemon) else {
            throw Missing(what: "dbus-daemon (apt-get install dbus)")
        }
        directory = try TestEnvironment.temporaryDirectory(prefix)
        let socket = directory.appendingPathComponent("bus").path
        address = "unix:path=\(socket)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.dbusDaemon)
        process.arguments = ["--config-file=\(Self.configuration.path)", "--address=\(address)", "--nofork", "--nopidfile"]
        process.standardOutput = FileHandle.nullDevice
        // The daemon complains on stderr that it may not raise its fd limit; keep that out of test output.
        process.standardError = FileHandle.nullDevice
        try process.run()
        daemon = Mutex(process)
        // The socket file appears when the daemon binds it, a moment before it listens: wait
        // until a connection is accepted.
        do {
            try await waitUntil("the private bus at \(socket) to accept connections") { Self.accepts(socket) }
        } catch {
            await stop()
            throw error
        }
    }

    /// Sends `signal` to the daemon (SIGSTOP to hold every reply, SIGKILL to drop the bus).
    public func signal(_ signal: Int32) {
        let pid = daemon.withLock { $0.processIdentifier }
        _ = Glibc.kill(pid, signal)
    }

    /// Kills the daemon and removes its directory. SIGKILL, because children of the test process
    /// inherit its blocked signal mask (Dispatch blocks SIGTERM), so SIGTERM would not arrive.
    public func stop() async {
        signal(SIGKILL)
        let pid = daemon.withLock { $0.processIdentifier }
        try? await waitUntil("the bus daemon \(pid) to exit") { [self] in
            !daemon.withLock { $0.isRunning }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether a Unix stream socket at `path` accepts a connection now.
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 }
        }
    }

    /// A program a test needs is not installed.
    public struct Missing: Error, CustomStringConvertible {
        public let what: String
        public var description: String { "missing: \(what)" }
        public init(what: String) { self.what = what }
    }
}

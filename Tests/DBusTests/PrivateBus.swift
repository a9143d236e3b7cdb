import DBus
import Foundation
import GatewayTesting
import Glibc
import Synchronization

/// A private dbus-daemon for one test, listening on a socket in a temporary directory: a hard
/// requirement (`apt-get install dbus`).
final class PrivateBus: Sendable {
    static let dbusDaemon = "/usr/bin/dbus-daemon"

    let directory: URL
    /// The bus's address, for ``DBusConnection/init(address:library:)``.
    let address: String
    private let daemon: Mutex<Process>

    /// Starts the daemon and returns once it accepts connections.
    init() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.dbusDaemon) else {
            throw Missing(what: "dbus-daemon (apt-get install dbus)")
        }
        directory = try TestEnvironment.temporaryDirectory("healthgate-dbus")
        let socket = directory.appendingPathComponent("bus").path
        address = "unix:path=\(socket)"
        let config = directory.appendingPathComponent("bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
              "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.dbusDaemon)
        process.arguments = ["--config-file=\(config.path)", "--nofork", "--nopidfile"]
        process.standardOutput = FileHandle.nullDevice
        // The daemon complains on stderr that it may not raise its fd limit; keep that out of test output.
        process.standardError = FileHandle.nullDevice
        try process.run()
        daemon = Mutex(process)
        // The socket file appears when the daemon binds it, a moment before it listens: wait
        // until a connection is accepted.
        do {
            try await waitUntil("the private bus at \(socket) to accept connections") { [address] in
                guard let probe = try? DBusConnection(address: address) else { return false }
                probe.close()
                return true
            }
        } catch {
            await stop()
            throw error
        }
    }

    /// Sends `signal` to the daemon (SIGSTOP to hold every reply, SIGKILL to drop the bus).
    func signalBus(_ signal: Int32) {
        let pid = daemon.withLock { $0.processIdentifier }
        _ = Glibc.kill(pid, signal)
    }

    /// Kills the daemon and removes its directory. SIGKILL, because children of the test process
    /// inherit its blocked signal mask (Dispatch blocks SIGTERM), so SIGTERM would not arrive.
    func stop() async {
        signalBus(SIGKILL)
        let pid = daemon.withLock { $0.processIdentifier }
        try? await waitUntil("the bus daemon \(pid) to exit") { [self] in
            !daemon.withLock { $0.isRunning }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    struct Missing: Error, CustomStringConvertible {
        let what: String
        var description: String { "missing: \(what)" }
    }
}

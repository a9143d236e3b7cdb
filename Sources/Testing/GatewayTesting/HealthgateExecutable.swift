public import Foundation
import AsyncPrimitives
import Synchronization
import XCTest

/// Runs the built `healthgate` executable in tests, with XDG directories in a private temporary
/// directory so that no test touches the real home, runtime or data directories.
public struct HealthgateExecutable: Sendable {
    /// The binary.
    public let url: URL
    /// The private root: `data/`, `state/`, `config/`, `runtime/` live below it.
    public let root: URL
    /// The environment every run gets (the process environment plus the XDG overrides).
    public var environment: [String: String]

    /// Finds the binary next to the test bundle (`swift build --build-tests` builds it) and makes a
    /// private root. Throws when the binary is missing, with the command that builds it.
    public init(file: StaticString = #filePath) throws {
        let candidates = [
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("healthgate"),
            Bundle.main.bundleURL.appendingPathComponent("healthgate"),
            Self.packageRoot(file).appendingPathComponent(".build/debug/healthgate"),
        ]
        guard let url = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ExecutableNotBuilt(searched: candidates.map(\.path))
        }
        self.url = url
        self.root = try TestEnvironment.temporaryDirectory("healthgate-e2e")
        var environment = ProcessInfo.processInfo.environment
        for (key, directory) in [("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
                                 ("XDG_CONFIG_HOME", "config"), ("XDG_RUNTIME_DIR", "runtime")] {
            let path = root.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
            environment[key] = path.path
        }
        for systemd in ["STATE_DIRECTORY", "RUNTIME_DIRECTORY", "CONFIGURATION_DIRECTORY", "JOURNAL_STREAM"] {
            environment[systemd] = nil
        }
        self.environment = environment
    }

    /// The package root, found from a source file's path.
    public static func packageRoot(_ file: StaticString = #filePath) -> URL {
        var url = URL(fileURLWithPath: "\(file)")
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }

    /// Starts `healthgate demo --quiet` on the store file `name` in the private root and waits
    /// until it takes commands (``waitForControlSocket(_:)``).
    /// - Returns: the daemon and its store's path.
    public func startDemo(store name: String) async throws -> (daemon: RunningProcess, database: String) {
        let database = root.appendingPathComponent(name).path
        let daemon = try start(["demo", "--db", database, "--quiet"])
        try await waitForControlSocket()
        return (daemon, database)
    }

    /// Starts `healthgate ARGUMENTS` (a `run`) and waits until its control socket answers to the
    /// file system; when it does not within a minute, the error carries what the gateway said.
    public func startServing(_ arguments: [String]) async throws -> RunningProcess {
        let gateway = try start(arguments)
        do {
            try await waitForControlSocket()
        } catch {
            throw GatewayDidNotServe(cause: "\(error)", standardError: gateway.standardError)
        }
        return gateway
    }

    /// ``startServing(_:)``'s gateway made no control socket.
    public struct GatewayDidNotServe: Error, CustomStringConvertible {
        public var cause: String
        public var standardError: String
        public var description: String { "no control socket (\(cause)); the gateway said:\n\(standardError)" }
    }

    /// Waits, at most a minute, until the daemon's control socket exists (`what` names the wait
    /// in a timeout).
    public func waitForControlSocket(_ what: String = "the control socket") async throws {
        try await waitUntil(timeout: .seconds(60), what) { FileManager.default.fileExists(atPath: controlSocket.path) }
    }

    /// The default SQLite store of this private root.
    public var defaultDatabase: URL { root.appendingPathComponent("data/healthgate/samples.sqlite") }
    /// The control socket of this private root.
    public var controlSocket: URL { root.appendingPathComponent("runtime/healthgate/control.sock") }

    /// Runs to completion and returns the exit status and output.
    public func run(_ arguments: [String], timeout: Duration = .seconds(120)) async throws -> Result {
        let process = try start(arguments)
        return try await process.waitForExit(timeout: timeout)
    }

    /// Starts a process and returns a handle to it.
    public func start(_ arguments: [String]) throws -> RunningProcess {
        try RunningProcess(url: url, arguments: arguments, environment: environment)
    }

    /// A finished run.
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// A running `healthgate` process whose output is collected as it arrives.
    public final class RunningProcess: Sendable {
        private let process: Process
        private let pipes: (output: Pipe, errors: Pipe)
        private let output = Mutex(Data())
        private let errors = Mutex(Data())
        /// How many of the two pipes have reached end of file.
        private let pipesAtEnd = AsyncCondition(0)

        init(url: URL, arguments: [String], environment: [String: String]) throws {
            let process = Process()
            process.executableURL = url
            process.arguments = arguments
            process.environment = environment
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            self.process = process
            self.pipes = (out, err)
            try process.run()
            // One reader thread per pipe, until end of file: a result is returned only once both
            // have ended, so no output that was in flight is lost or reordered.
            for (pipe, isOutput) in [(out, true), (err, false)] {
                let handle = pipe.fileHandleForReading
                let thread = Thread { [weak self] in
                    // The read end is closed here at end of file, not when the handle happens
                    // to be released: left to that, a suite that runs the executable thousands
                    // of times held 2 000 pipe descriptors, and Foundation's Process.run on
                    // Linux crashes reading a /proc/self/fd that large (an over-read of each
                    // entry, fixed upstream in swift-corelibs-foundation after 6.3).
                    defer { try? handle.close() }
                    while true {
                        let data = handle.availableData
                        guard let self else { return }
                        if data.isEmpty {
                            self.pipesAtEnd.update { $0 += 1 }
                            return
                        }
                        if isOutput { self.output.withLock { $0.append(data) } } else { self.errors.withLock { $0.append(data) } }
                    }
                }
                thread.start()
            }
        }

        public var pid: Int32 { process.processIdentifier }
        public var isRunning: Bool { process.isRunning }
        public var standardOutput: String { output.withLock { String(decoding: $0, as: UTF8.self) } }
        public var standardError: String { errors.withLock { String(decoding: $0, as: UTF8.self) } }

        /// Sends a signal (SIGTERM, SIGINT, SIGKILL…).
        public func send(_ signal: Int32) {
            kill(process.processIdentifier, signal)
        }

        /// Waits for the process to exit; kills it and throws after `timeout`.
        /// Sends SIGTERM and waits, at most `timeout`, until the process exits; fails the test
        /// (with its standard error) unless it exits 0.
        /// - Returns: how it exited.
        @discardableResult
        public func terminate(
            timeout: Duration = .seconds(30), file: StaticString = #filePath, line: UInt = #line
        ) async throws -> Result {
            send(SIGTERM)
            let result = try await waitForExit(timeout: timeout)
            XCTAssertEqual(result.status, 0, result.standardError, file: file, line: line)
            return result
        }

        public func waitForExit(timeout: Duration = .seconds(60)) async throws -> Result {
            do {
                try await waitUntil(timeout: timeout, "healthgate \(process.arguments ?? []) to exit") {
                    !self.process.isRunning
                }
            } catch {
                send(SIGKILL)
                throw error
            }
            // The process is gone, so its ends of the pipes are closed: the readers reach the end.
            try await pipesAtEnd.wait { $0 == 2 }
            return Result(status: process.terminationStatus, standardOutput: standardOutput, standardError: standardError)
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// The binary is not built.
    public struct ExecutableNotBuilt: Error, CustomStringConvertible {
        public var searched: [String]
        public var description: String {
            "healthgate is not built (run `swift build --build-tests`); looked in: \(searched.joined(separator: ", "))"
        }
    }
}

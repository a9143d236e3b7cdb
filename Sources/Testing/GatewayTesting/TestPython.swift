public import Foundation
import Synchronization

/// Runs a Python script of the test suite with the virtual environment `scripts/install-test-python`
/// makes (`.build/pyenv`: the independent decoders and validators tests compare with).
public enum TestPython {
    /// A finished script.
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
    }

    /// The environment's interpreter.
    /// - Throws: when it is missing, naming the command that makes it.
    public static func interpreter(_ file: StaticString = #filePath) throws -> URL {
        let python = HealthgateExecutable.packageRoot(file).appendingPathComponent(".build/pyenv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw NSError(domain: "TestPython", code: 1, userInfo: [
                NSLocalizedDescriptionKey: "the tests' virtual environment is missing: run scripts/install-test-python",
            ])
        }
        return python
    }

    /// Runs `script` (a path below the package root) with `arguments`, feeding it `input`, and
    /// returns its status and output. Read and waited for on a thread of its own, never on the
    /// cooperative pool: a script may run for a minute and print more than a pipe holds.
    public static func run(
        _ script: String, _ arguments: [String] = [], input: Data? = nil, file: StaticString = #filePath
    ) async throws -> Result {
        let process = Process()
        process.executableURL = try interpreter(file)
        process.arguments = [HealthgateExecutable.packageRoot(file).appendingPathComponent(script).path] + arguments
        let output = Pipe()
        let errors = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        let feed = input
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                if let feed { stdin.fileHandleForWriting.write(feed) }
                try? stdin.fileHandleForWriting.close()
                // The error stream is read beside the output, so that neither pipe fills.
                let errorData = Mutex(Data())
                let group = DispatchGroup()
                DispatchQueue.global().async(group: group) {
                    let data = errors.fileHandleForReading.readDataToEndOfFile()
                    errorData.withLock { $0 = data }
                }
                let data = output.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                process.waitUntilExit()
                continuation.resume(returning: Result(
                    status: process.terminationStatus, output: String(decoding: data, as: UTF8.self),
                    errors: String(decoding: errorData.withLock { $0 }, as: UTF8.self)))
            }
        }
    }
}

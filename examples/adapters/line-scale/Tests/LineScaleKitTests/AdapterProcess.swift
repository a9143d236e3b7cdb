import Dispatch
import Foundation
import HealthgateAdapter
import Synchronization

/// The built `line-scale`, run as the gateway runs it: a child process on pipes, its lines
/// decoded as the gateway decodes them. Waits are for a line, with a deadline, never for a time.
final class AdapterProcess: Sendable {
    private let process: Process
    private let input: FileHandle
    private let received = Mutex<(lines: [String], ended: Bool)>(([], false))
    private let arrived = DispatchSemaphore(value: 0)

    /// The executable, built beside the test bundle (the test target depends on it).
    static var executable: URL { Bundle.main.bundleURL.appendingPathComponent("line-scale") }

    /// Starts the adapter and writes the gateway's hello with `config` and `checkpoint`.
    init(config: String, checkpoint: String? = nil) throws {
        process = Process()
        process.executableURL = Self.executable
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        input = stdin.fileHandleForWriting
        try process.run()
        let output = stdout.fileHandleForReading
        DispatchQueue(label: "adapter-stdout").async { [self] in
            var pending = Data()
            while true {
                let data = output.availableData
                guard !data.isEmpty else { break }
                pending += data
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    received.withLock { $0.lines.append(line) }
                    arrived.signal()
                }
            }
            received.withLock { $0.ended = true }
            arrived.signal()
        }
        let checkpointKey = checkpoint.map { #","checkpoint":\#($0)"# } ?? ""
        write(#"{"type":"hello","protocol":1,"gateway":"test","name":"scale","config":\#(config)\#(checkpointKey),"maxLineBytes":65536}"#)
    }

    /// Writes one of the gateway's lines.
    func write(_ line: String) {
        input.write(Data((line + "\n").utf8))
    }

    /// Closes the adapter's stdin, as the gateway does after `stop`.
    func closeInput() { try? input.close() }

    /// Every line so far, decoded.
    var messages: [AdapterOutput] {
        received.withLock { $0.lines }.compactMap { try? AdapterOutput(line: Array($0.utf8)) }
    }

    /// Every line so far, as written.
    var lines: [String] { received.withLock { $0.lines } }

    /// Waits until `condition` holds for the messages so far, or `seconds` pass.
    @discardableResult
    func wait(seconds: Double = 10, until condition: ([AdapterOutput]) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + seconds
        while true {
            if condition(messages) { return true }
            if received.withLock({ $0.ended }) { return condition(messages) }
            if arrived.wait(timeout: deadline) == .timedOut { return condition(messages) }
        }
    }

    /// Waits for the adapter to exit (`seconds` at most) and returns its status; nil if it did not.
    func exitStatus(seconds: Double = 10) -> Int32? {
        let exited = DispatchSemaphore(value: 0)
        let process = process
        DispatchQueue(label: "adapter-exit").async {
            process.waitUntilExit()
            exited.signal()
        }
        guard exited.wait(timeout: .now() + seconds) == .success else {
            process.terminate()
            return nil
        }
        return process.terminationStatus
    }
}

extension [AdapterOutput] {
    var readingIDs: [String] { compactMap { if case .quantity(let reading) = $0 { reading.id } else { nil } } }
    var checkpointOffsets: [Double] {
        compactMap { if case .checkpoint(let checkpoint) = $0 { checkpoint.state["offset"]?.doubleValue } else { nil } }
    }
    var errors: [String] { compactMap { if case .log(let log) = $0, log.level == .error { log.message } else { nil } } }
    var states: [String] { compactMap { if case .status(let status) = $0 { status.state } else { nil } } }
}

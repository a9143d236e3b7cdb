public import Foundation
import Dispatch
import Synchronization

/// Persists each device's last counter reading, so that a restarted gateway resumes where it
/// stopped: no step counted twice, none lost.
///
/// One JSON file per source instance in the state directory. Every save writes a temporary file
/// in the same directory, fsyncs it and renames it over the old one (rename(2) is atomic), so a
/// crash leaves either the old or the new file, never a torn one. File I/O runs on a private
/// serial queue, never on the cooperative pool. Thread-safe.
public final class CounterStateStore: Sendable {
    /// A failure to read or write the state file, with the path.
    public struct StoreError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "counter state \(path): \(reason)" }
    }

    /// The state file.
    public let url: URL
    private let states = Mutex<[String: StepCounterState]>([:])
    private let queue = DispatchQueue(label: "healthgate.serial-pedometer.state")

    /// A store for `url`. Call ``load()`` before use.
    public init(url: URL) {
        self.url = url
    }

    /// Reads the file. A missing file is an empty store. An unreadable or corrupt file is moved
    /// aside to `<name>.corrupt` (so nothing is destroyed) and reported: the caller logs it and
    /// continues with an empty store, which re-baselines every device.
    public func load() async throws(StoreError) {
        let url = self.url
        let result: Result<[String: StepCounterState], StoreError> = await withCheckedContinuation { continuation in
            queue.async {
                guard FileManager.default.fileExists(atPath: url.path) else {
                    continuation.resume(returning: .success([:]))
                    return
                }
                do {
                    let data = try Data(contentsOf: url)
                    let decoder = JSONDecoder()
                    decoder.dateDecodingStrategy = .millisecondsSince1970
                    continuation.resume(returning: .success(try decoder.decode([String: StepCounterState].self, from: data)))
                } catch {
                    let aside = url.appendingPathExtension("corrupt")
                    try? FileManager.default.removeItem(at: aside)
                    let moved = (try? FileManager.default.moveItem(at: url, to: aside)) != nil
                    continuation.resume(returning: .failure(StoreError(
                        path: url.path,
                        reason: "unreadable (\(error)); " + (moved ? "moved to \(aside.lastPathComponent)" : "could not move it aside"))))
                }
            }
        }
        switch result {
        case .success(let loaded): states.withLock { $0 = loaded }
        case .failure(let error): throw error
        }
    }

    /// The stored state of `device`.
    public func state(for device: String) -> StepCounterState? {
        states.withLock { $0[device] }
    }

    /// Every stored state.
    public var all: [String: StepCounterState] { states.withLock { $0 } }

    /// Records `state` for `device` and writes the file durably before returning.
    public func save(_ state: StepCounterState, for device: String) async throws(StoreError) {
        let snapshot = states.withLock { states in
            states[device] = state
            return states
        }
        let url = self.url
        let failure: StoreError? = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Self.write(snapshot, to: url))
            }
        }
        if let failure { throw failure }
    }

    private static func write(_ states: [String: StepCounterState], to url: URL) -> StoreError? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let data = try encoder.encode(states)
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
                return StoreError(path: temporary.path, reason: "cannot create the temporary file")
            }
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
            guard rename(temporary.path, url.path) == 0 else {
                let code = errno
                return StoreError(path: url.path, reason: "rename: \(String(cString: strerror(code)))")
            }
            return nil
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            return StoreError(path: url.path, reason: "\(error)")
        }
    }
}

import Dispatch
import FoundationEssentials
import HealthModel
import Synchronization
import Workouts
import WorkoutPresentation

/// Answers the board's requests, apart from the event stream (which ``BoardServer`` runs):
/// the page and its assets, the board as JSON, and the history pages.
///
/// Runs on the web server's connection threads. The history comes from an async store; those
/// threads are libmicrohttpd's, not Swift's cooperative pool, so they may wait for it.
struct BoardRouter: Sendable {
    let board: any BoardFeed
    let history: (any WorkoutHistory)?

    /// The answer to `GET path`.
    func respond(to path: String) -> BoardResponse {
        switch path {
        case "/", "/index.html":
            return .text(200, "text/html", BoardAssets.boardPage)
        case "/board.css":
            return .text(200, "text/css", BoardAssets.stylesheet)
        case "/board.js":
            return .text(200, "text/javascript", BoardAssets.script)
        case "/api/board":
            do {
                return BoardResponse(status: 200, contentType: "application/json", body: Array(try Self.encode(board.snapshot())))
            } catch {
                return .text(500, "text/plain", "cannot encode the board: \(error)")
            }
        case "/history":
            return historyList()
        default:
            if path.hasPrefix("/history/") { return historyItem(String(path.dropFirst("/history/".count))) }
            return .text(404, "text/plain", "not found")
        }
    }

    /// The board (`/api/board`) or an event's update, as sent.
    static func encode(_ value: some Encodable) throws -> Data {
        try HealthJSON.makeEncoder().encode(value)
    }

    /// An event of the board's stream (``BoardUpdate/eventJSON()``).
    static func encodeEvent(_ update: BoardUpdate) throws -> [UInt8] {
        try update.eventJSON()
    }

    private func historyList() -> BoardResponse {
        guard let history else {
            return .text(200, "text/html", BoardAssets.historyPage(rows: [], note: "No SQLite store is configured: nothing is kept."))
        }
        switch Self.wait({ try await history.workouts() }) {
        case .success(let stored):
            return .text(200, "text/html", BoardAssets.historyPage(rows: stored, note: stored.isEmpty ? "No workouts stored yet." : nil))
        case .failure(let error):
            return .text(500, "text/plain", "cannot read the stored workouts: \(error)")
        }
    }

    private func historyItem(_ name: String) -> BoardResponse {
        let svgOnly = name.hasSuffix(".svg")
        guard let id = SampleID(string: svgOnly ? String(name.dropLast(4)) : name) else {
            return .text(404, "text/plain", "not a workout id")
        }
        guard let history else { return .text(404, "text/plain", "no store") }
        switch Self.wait({ try await history.workout(id: id) }) {
        case .success(let found?):
            let participant = Self.participant(of: found.workout)
            let roster = board.roster
            let profile = participant.flatMap { roster.participant(named: $0)?.profile } ?? roster.defaultProfile
            let svg = WorkoutChart.svg(
                workout: found.workout, samples: found.samples, zones: profile.heartRateZones(on: found.workout.startDate))
            if svgOnly { return .text(200, "image/svg+xml", svg) }
            return .text(200, "text/html", BoardAssets.chartPage(workout: found.workout, participant: participant, svg: svg))
        case .success(nil):
            return .text(404, "text/plain", "no workout \(id)")
        case .failure(let error):
            return .text(500, "text/plain", "cannot read workout \(id): \(error)")
        }
    }

    /// The participant a stored workout belongs to (its `healthgate.participant` metadata).
    static func participant(of workout: Workout) -> String? {
        if case .string(let name)? = workout.metadata[.participant] { return name }
        return nil
    }

    /// Runs `body` and waits for it on the calling thread: a web server connection thread,
    /// never Swift's pool. The task is the bridge from that C thread into async code.
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        // Set before the signal.
        return outcome.withLock { $0 } ?? .failure(CancellationError())
    }
}

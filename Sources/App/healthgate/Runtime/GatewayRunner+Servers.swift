import GatewayRuntime
import HealthStore
import Metrics
import SampleBus
import WebBoard
import WorkoutPresentation
import WorkoutRuntime

extension GatewayRunner {
    /// The live board and its settings (`web`).
    struct Board {
        let configuration: WebBoardConfiguration
        let board: LiveBoard
        /// The board as a sink of the bus. It needs only the latest readings: when it falls
        /// behind, the oldest go.
        var sink: ConfiguredSink {
            ConfiguredSink(name: "board", kind: "board", queue: QueueConfiguration(capacity: 1000, policy: .dropOldest), sink: board)
        }
    }

    /// The live board when `web` configures it, else nil.
    func makeBoard(_ facts: RunFacts, workouts: ParticipantWorkouts) throws -> Board? {
        guard let web = try WebBoardConfiguration.decode(facts.configuration.web, origin: facts.configuration.origin) else {
            return nil
        }
        return Board(configuration: web, board: LiveBoard(workouts: workouts, clock: facts.clock))
    }

    /// `GET /metrics` on a server of its own when `metrics.listen` configures one, else nil.
    static func metricsPart(_ facts: RunFacts, metrics: GatewayMetrics) throws -> GatewayPart? {
        let origin = facts.configuration.origin
        guard let listen = try WebBoardConfiguration.decode(facts.configuration.metrics, origin: origin, key: "metrics") else {
            return nil
        }
        let server = BoardServer(
            metricsOnly: listen, token: try listen.token(origin: origin, key: "metrics"), metrics: metrics,
            logger: facts.logger.child("metrics"))
        return GatewayPart(
            name: "metrics server", start: { try start(server, key: "metrics.listen") }, stop: { await server.stop() })
    }

    /// The board's server (`web.listen`), with `GET /metrics` beside the board, sending the
    /// board's changes while the bus runs.
    static func boardPart(_ board: Board, _ facts: RunFacts, store: HealthStore, metrics: GatewayMetrics) throws -> GatewayPart {
        let server = BoardServer(
            configuration: board.configuration, token: try board.configuration.token(origin: facts.configuration.origin),
            board: board.board, history: StoredWorkoutHistory(store: store), metrics: metrics, logger: facts.logger.child("web"))
        let live = board.board
        return GatewayPart(
            name: "board server", start: { try start(server, key: "web.listen") },
            // On every reading, coalesced (BoardUpdate.coalescingMilliseconds): a sample reaches
            // the page within the bus's latency plus that window; only the changed tiles are sent
            // (BoardUpdate).
            work: { try await server.publishChanges(from: live) },
            stop: { await server.stop() })
    }

    /// Starts `server`, its failure a ``CommandError`` naming the setting `key`.
    private static func start(_ server: BoardServer, key: String) throws {
        do {
            try server.start()
        } catch {
            throw CommandError(.unavailable, "\(key): \(error)")
        }
    }
}

import GatewayRuntime

/// The parts of a gateway in their start order, as swift-service-lifecycle's `ServiceGroup`
/// takes its services: each part starts after the ones before it, their work runs beside the
/// bus, and they stop in reverse, so a part stops before what it was started on.
///
/// The order is the list's and nothing else's: ``GatewayRunner`` declares it once, where it
/// assembles the parts.
struct GatewayParts: Sendable {
    /// In start order.
    let parts: [GatewayPart]
    let logger: Logger

    /// Starts each part in order. When one throws, the parts started before it are stopped in
    /// reverse and its error is rethrown.
    func start() async throws {
        for (index, part) in parts.enumerated() {
            do {
                try await part.start()
            } catch {
                let started = parts[..<index]
                logger.notice(
                    "\(part.name) did not start; stopping the parts started before it"
                        + (started.isEmpty ? "" : ": " + started.map(\.name).joined(separator: ", ")))
                await Self.stop(started)
                throw error
            }
        }
    }

    /// Runs `bus` with every part's work as child tasks beside it, and cancels that work once
    /// `bus` returns.
    func run<Outcome: Sendable>(beside bus: () async -> Outcome) async -> Outcome {
        await withTaskGroup(of: Void.self) { group -> Outcome in
            for part in parts {
                guard let work = part.work else { continue }
                let name = part.name, logger = logger
                group.addTask { await Self.perform(work, of: name, logger: logger) }
            }
            let outcome = await bus()
            group.cancelAll()
            return outcome
        }
    }

    /// Stops every part, the last started first.
    func stop() async {
        await Self.stop(parts[...])
    }

    private static func stop(_ parts: ArraySlice<GatewayPart>) async {
        for part in parts.reversed() { await part.stop() }
    }

    private static func perform(_ work: @Sendable () async throws -> Void, of name: String, logger: Logger) async {
        do {
            try await work()
        } catch is CancellationError {
            // The expected end of a part's work: the bus has ended and cancelled it.
            logger.debug("\(name): cancelled as the gateway stops")
        } catch {
            logger.error("\(name) failed: \(error)")
        }
    }
}

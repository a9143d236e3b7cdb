public import AsyncPrimitives
public import SampleBus
import Foundation

/// Discovers peripherals with a transport and follows each one the filter accepts, up to
/// `maxDevices`, every one in its own child task: the discovery loop every Bluetooth LE source
/// shares. What following means (connect, subscribe, map) is the source's `follow` closure,
/// usually a ``PeripheralSession``.
///
/// A device already followed is not followed twice: its presence condition turns true again when
/// discovery reports it, and false when its object is gone, which the session's reconnect logic
/// waits on. No Bluetooth is logged once and retried with backoff; it never ends the loop. Only
/// cancellation does.
public struct PeripheralFollower: Sendable {
    /// The work for one followed device, given its session: runs until cancelled.
    public typealias Follow = @Sendable (PeripheralSession) async throws -> Void

    public let transport: any BLECentralTransport
    public let filter: DeviceFilter
    public let maxDevices: Int
    /// The backoff between discovery attempts that failed or ended, and each session's
    /// reconnect backoff.
    public let retry: ReconnectPolicy

    public init(transport: any BLECentralTransport, filter: DeviceFilter, maxDevices: Int, retry: ReconnectPolicy) {
        self.transport = transport
        self.filter = filter
        self.maxDevices = maxDevices
        self.retry = retry
    }

    /// How logs name a peripheral: its advertised name and address, else the address.
    public static func displayName(of peripheral: DiscoveredPeripheral) -> String {
        let key = peripheral.address.uppercased()
        return peripheral.name.map { "\($0) [\(key)]" } ?? key
    }

    /// Discovers and follows until cancelled (then throws `CancellationError`).
    public func run(context: SourceContext, follow: @escaping Follow) async throws {
        let logger = context.logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            var followed: [String: AsyncCondition<Bool>] = [:]
            var failures = 0
            var unavailableLogged = false
            while !Task.isCancelled {
                do {
                    for try await event in transport.discover(services: filter.services) {
                        if unavailableLogged {
                            logger.notice("Bluetooth is available again")
                            context.status.setDetail("bluetooth", nil)
                            context.status.clearError()
                            unavailableLogged = false
                        }
                        failures = 0
                        switch event {
                        case .found(let peripheral):
                            let address = peripheral.address.uppercased()
                            if let presence = followed[address] {
                                presence.set(true)
                            } else if filter.matches(peripheral) {
                                guard followed.count < maxDevices else {
                                    logger.debug(
                                        "ignoring \(address): already following \(maxDevices) device(s)",
                                        device: peripheral.name ?? address)
                                    continue
                                }
                                let presence = AsyncCondition(true)
                                followed[address] = presence
                                logger.info("following \(address)", device: Self.displayName(of: peripheral))
                                let session = PeripheralSession(
                                    peripheral: peripheral, transport: transport, context: context, reconnect: retry,
                                    presence: presence)
                                group.addTask { try await follow(session) }
                            }
                        case .lost(let address):
                            if let presence = followed[address.uppercased()] {
                                presence.set(false)
                                logger.info("\(address.uppercased()) is no longer discovered", device: address.uppercased())
                            }
                        }
                    }
                    // The stream ended without an error: discover again after a pause.
                    failures += 1
                } catch let error as BLETransportError where error.code == .unavailable {
                    failures += 1
                    if !unavailableLogged {
                        logger.error("no Bluetooth: \(error.message); retrying until it appears")
                        unavailableLogged = true
                    }
                    context.status.setDetail("bluetooth", "unavailable")
                    context.status.reportError("no Bluetooth: \(error.message)", at: context.clock.now())
                } catch is CancellationError {
                    break
                } catch {
                    failures += 1
                    logger.warning("discovery failed: \(error)")
                    context.status.reportError("discovery failed: \(error)", at: context.clock.now())
                }
                try await context.clock.sleep(for: retry.delay(afterFailures: failures))
            }
            group.cancelAll()
            try await group.waitForAll()
        }
        try Task.checkCancellation()
    }
}

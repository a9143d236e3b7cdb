public import BLETransport
import Synchronization

/// A transport (a simulator, usually) with a way to drop every link it made, as a device walking
/// out of range does: what a source does after a link loss, tested against the real simulators.
public final class LinkDroppingTransport: BLECentralTransport {
    public let wrapped: any BLECentralTransport
    private let links = Mutex<[any BLEConnection]>([])

    public init(_ wrapped: any BLECentralTransport) {
        self.wrapped = wrapped
    }

    /// How many connections were made.
    public var connections: Int { links.withLock { $0.count } }

    public func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        wrapped.discover(services: services)
    }

    public func connect(to address: String) async throws -> any BLEConnection {
        let connection = try await wrapped.connect(to: address)
        links.withLock { $0.append(connection) }
        return connection
    }

    public func powerCycleAdapter() async throws {
        try await wrapped.powerCycleAdapter()
    }

    /// Disconnects every link made so far.
    public func dropLinks() async {
        for link in links.withLock({ $0 }) { await link.disconnect() }
    }
}

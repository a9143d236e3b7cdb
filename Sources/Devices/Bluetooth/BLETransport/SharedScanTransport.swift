/// An adapter's transport as a connection-based source uses it: discovery joins the adapter's
/// one scan (``SharedAdvertisementScanner/discover(services:addresses:)``), connecting, pairing
/// and power-cycling go to the stack's transport, the one the scan runs on (so that BlueZ pauses
/// that scan's discovery for a connection attempt). ``BluetoothAdapters/transport(for:)`` hands
/// these out.
struct SharedScanTransport: BLECentralTransport {
    /// The stack's transport of the adapter.
    let stack: any BLECentralTransport
    /// The adapter's one scan.
    let scanner: SharedAdvertisementScanner

    func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        scanner.discover(services: services)
    }

    func discover(services: [BluetoothUUID], addresses: Set<String>) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        scanner.discover(services: services, addresses: addresses)
    }

    func connect(to address: String) async throws -> any BLEConnection {
        try await stack.connect(to: address)
    }

    func connect(to address: String, pairing: DevicePairing?) async throws -> any BLEConnection {
        try await stack.connect(to: address, pairing: pairing)
    }

    func powerCycleAdapter() async throws {
        try await stack.powerCycleAdapter()
    }
}

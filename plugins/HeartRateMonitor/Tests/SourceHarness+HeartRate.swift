import BLEProfileKit
import BLETesting
import BLETransport
import GatewayTesting
import HeartRateMonitor

extension SourceHarness {
    /// Runs a ``HeartRateSource`` against `transport`, on the transport's clock (the one it
    /// stamps notifications with).
    convenience init(configuration: HeartRateSourceConfiguration = HeartRateSourceConfiguration(), transport: FakeBLETransport) throws {
        try self.init(configuration: configuration, clock: transport.clock) { _ in transport }
    }

    /// `transport` gets the harness's clock (for transports that pace themselves on it).
    convenience init(
        configuration: HeartRateSourceConfiguration, clock: ManualClock = ManualClock(),
        transport: (ManualClock) -> any BLECentralTransport
    ) throws {
        try self.init(name: "hr", kind: HeartRateSource.kind, clock: clock) { environment in
            try HeartRateSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport(clock), clock: clock))
        }
    }
}

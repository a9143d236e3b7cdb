import BLETransport
public import GatewayTesting
import XCTest

extension FakeBLETransport {
    /// Lets the source that `harness` runs find `profile`'s device once it has started discovery,
    /// and waits until the source's connection to it is `ready` (`what` names that in a timeout).
    /// - Returns: that connection.
    @discardableResult
    public func connect(
        _ profile: FakeProfile, in harness: SourceHarness, until what: String, _ ready: @Sendable (FakeConnection) -> Bool
    ) async throws -> FakeConnection {
        try await harness.waitFor("discovery") { self.discoverCalls == 1 }
        emit(.found(profile.peripheral))
        try await harness.waitFor(what) { self.latest(profile.address).map(ready) == true }
        return try XCTUnwrap(latest(profile.address))
    }
}

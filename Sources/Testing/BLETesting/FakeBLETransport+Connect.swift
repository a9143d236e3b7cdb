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

    /// Drops `link`, lets the source's first reconnect backoff elapse (a second on the harness's
    /// clock) and waits until its next connection to the same device is `ready` (`what` names
    /// that in a timeout).
    /// - Returns: that connection.
    @discardableResult
    public func reconnect(
        _ link: FakeConnection, in harness: SourceHarness, until what: String, _ ready: @Sendable (FakeConnection) -> Bool
    ) async throws -> FakeConnection {
        let address = link.address
        let before = connections(address).count
        link.dropLink()
        try await harness.waitFor("the backoff") { harness.clock.sleeperCount == 1 }
        harness.clock.advance(by: .seconds(1))
        try await harness.waitFor(what) { self.connections(address).count == before + 1 && self.latest(address).map(ready) == true }
        return try XCTUnwrap(latest(address))
    }
}

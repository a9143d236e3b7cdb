import Foundation
import GatewayTesting
import HealthStore
import XCTest

/// What the sink's suites start each test with: a temporary directory, a real `mosquitto` on
/// 127.0.0.1 (persistent sessions, so a recorder's session survives a broker restart) and a store
/// for the sink to follow; all gone after the test. Holds no tests of its own.
class BrokerAndStoreTestCase: XCTestCase {
    var directory: URL!
    var broker: MosquittoBroker!
    var store: HealthStore!

    override func setUp() async throws {
        directory = try TestEnvironment.temporaryDirectory("mqtt")
        broker = try MosquittoBroker(directory: directory, persistent: true)
        try await broker.start()
        store = try await HealthStore.open(path: directory.appendingPathComponent("store.sqlite").path)
    }

    override func tearDown() async throws {
        await store?.close()
        broker.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

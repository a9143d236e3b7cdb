public import BLEProfileKit
import Foundation
import GatewayRuntime
import GatewayTesting
import SampleBus
import XCTest

extension BluetoothProfile {
    /// The sources of the plugin's `sample-config.json` (beside the `Tests` folder holding
    /// `file`), each checked to be of this profile's kind, decoded strictly and built into a
    /// source on a scripted stack with no devices; fails unless there are `count`.
    /// - Returns: the decoded configurations, in the file's order.
    @discardableResult
    public static func sampleSourceConfigurations(
        count: Int, environmentName: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> [BluetoothSourceConfiguration<Self>] {
        let gateway = try TestEnvironment.sampleConfiguration(besideTestsOf: file)
        let environment = TestEnvironment.make(name: environmentName, directory: FileManager.default.temporaryDirectory)
        XCTAssertEqual(gateway.sources.count, count, file: file, line: line)
        return try gateway.sources.map { source in
            XCTAssertEqual(source.kind, kind, file: file, line: line)
            let configuration = try source.config.decodeStrictly(BluetoothSourceConfiguration<Self>.self)
            _ = try BluetoothSource<Self>(
                settings: configuration.validated(in: environment), environment: environment,
                bluetooth: .scripted(FakeBLETransport(profiles: []), clock: environment.clock))
            return configuration
        }
    }
}

public import Foundation
public import SampleBus

// A plugin documents its configuration keys in the `sample-config.json` beside its `Tests`
// folder; its tests read that very file, so a key the sample gets wrong fails a test.
extension TestEnvironment {
    /// The `sample-config.json` of the plugin whose tests include `file` (a file in the plugin's
    /// `Tests` folder, the caller's by default).
    public static func sampleConfigurationURL(besideTestsOf file: StaticString = #filePath) -> URL {
        URL(fileURLWithPath: "\(file)").deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("sample-config.json")
    }

    /// The plugin's `sample-config.json` (see ``sampleConfigurationURL(besideTestsOf:)``),
    /// parsed as the gateway parses a configuration file.
    /// - Throws: the file's read error, or the parser's error naming the file.
    public static func sampleConfiguration(besideTestsOf file: StaticString = #filePath) throws -> GatewayConfiguration {
        let url = sampleConfigurationURL(besideTestsOf: file)
        return try GatewayConfiguration.parse(Data(contentsOf: url), origin: url.path)
    }
}

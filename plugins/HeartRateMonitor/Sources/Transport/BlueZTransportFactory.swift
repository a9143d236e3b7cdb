public import SampleBus

/// Makes the BlueZ transport. This build has none: the BlueZ D-Bus transport replaces this file.
/// - Throws: ``PluginConfigurationError`` for the `transport` key.
public func makeBlueZTransport(adapter: String?, environment: PluginEnvironment) throws -> any BLECentralTransport {
    throw PluginConfigurationError(
        keyPath: "transport",
        reason: "the BlueZ transport is not built in; use \"simulated\" or a build with BlueZ support")
}

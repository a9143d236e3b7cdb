public import SampleBus

extension HTTPRepositorySink {
    /// Builds the sink from validated settings; the catalog's entry point (see
    /// ``HTTPRepositoryConfiguration/validated(in:)``). Opens the outbox in the state directory.
    /// - Throws: as ``init(configuration:environment:)``.
    public init(settings: HTTPRepositoryConfiguration, environment: PluginEnvironment) throws {
        try self.init(configuration: settings, environment: environment)
    }
}

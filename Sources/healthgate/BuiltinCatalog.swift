import HTTPRepository
import SampleBus

/// The compiled-in plugins. Adding a plugin is one folder under plugins/ and one line here.
enum BuiltinCatalog {
    static func make() -> PluginCatalog {
        PluginCatalog([
            .sink(HTTPRepositorySink.self),
        ])
    }
}

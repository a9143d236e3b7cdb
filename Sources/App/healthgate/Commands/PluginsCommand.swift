import BuiltinPlugins
import SampleBus
import FoundationEssentials
import GatewayRuntime

/// `healthgate plugins`: the compiled-in catalog.
enum PluginsCommand {
    static let command = Command(
        name: "plugins", summary: "List the compiled-in plugins with their kind and description.",
        usage: "plugins"
    ) { _, context in
        let catalog = BuiltinCatalog.make()
        let width = catalog.entries.map(\.kind.count).max() ?? 0
        context.print("KIND".padded(toLength: width + 2) + "ROLE    DESCRIPTION")
        for entry in catalog.entries {
            context.print(
                entry.kind.padded(toLength: width + 2)
                    + entry.role.rawValue.padded(toLength: 8) + entry.summary)
        }
        return .success
    }
}

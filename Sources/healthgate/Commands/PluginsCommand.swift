import SampleBus
import Foundation

/// `healthgate plugins`: the compiled-in catalog.
enum PluginsCommand {
    static let command = Command(
        name: "plugins", summary: "List the compiled-in plugins with their kind and description.",
        usage: "plugins"
    ) { _, context in
        let catalog = BuiltinCatalog.make()
        let width = catalog.entries.map(\.kind.count).max() ?? 0
        context.print("KIND".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "ROLE    DESCRIPTION")
        for entry in catalog.entries {
            context.print(
                entry.kind.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                    + entry.role.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0) + entry.summary)
        }
        return .success
    }
}

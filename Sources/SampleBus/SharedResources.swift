import Synchronization

/// What the plugins of one gateway run share: one instance per type and key, made by the first
/// plugin that asks and handed to every later one. The gateway makes one for its run and gives
/// it to every plugin's ``PluginEnvironment``, so it is injected like the clock, never found
/// through a global; an environment made without one gets its own.
///
/// The use it exists for: every Bluetooth LE source on an adapter must share that adapter's
/// connection scheduler (BlueZ answers InProgress to a second connection attempt, and a dongle
/// holds only so many links), whichever plugin the sources belong to.
public final class SharedResources: Sendable {
    private struct Key: Hashable {
        var type: ObjectIdentifier
        var name: String
    }

    private let resources = Mutex<[Key: any Sendable]>([:])

    public init() {}

    /// The resource of type `T` named `name`, made by `make` on the first request.
    public func resource<T: Sendable>(_ name: String, as type: T.Type = T.self, make: () -> T) -> T {
        resources.withLock { resources in
            let key = Key(type: ObjectIdentifier(T.self), name: name)
            if let existing = resources[key] as? T { return existing }
            let made = make()
            resources[key] = made
            return made
        }
    }
}

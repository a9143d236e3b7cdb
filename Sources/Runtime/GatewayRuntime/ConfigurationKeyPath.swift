/// How every configuration error writes where it is: `sinks[0].config.batchSize`, and
/// ``topLevel`` for the whole file or the whole object a module decodes, never an empty text.
///
/// Each module reports paths inside what it decodes (a plugin inside its `config`, the store
/// inside `store`) and its caller puts them under its own with ``joining(_:_:)``, so a path is
/// rendered by these two functions alone.
public enum ConfigurationKeyPath {
    /// The path of the whole value: `(top level)`.
    public static let topLevel = "(top level)"

    /// `path` as an error shows it: ``topLevel`` for the empty path.
    public static func rendered(_ path: String) -> String {
        path.isEmpty ? topLevel : path
    }

    /// Whether `path` names the whole value (empty, or ``topLevel``).
    public static func isTopLevel(_ path: String) -> Bool {
        path.isEmpty || path == topLevel
    }

    /// `inner`, a path inside the value at `outer`, as a path from where `outer` starts:
    /// `sources[0].config` and `interval` give `sources[0].config.interval`, an index is
    /// appended (`devices` and `[2]` give `devices[2]`), an inner path at the top level gives
    /// `outer` itself (the whole `config` is wrong), and an outer one at the top level gives
    /// `inner`.
    public static func joining(_ outer: String, _ inner: String) -> String {
        if isTopLevel(inner) { return rendered(outer) }
        if isTopLevel(outer) { return inner }
        return inner.hasPrefix("[") ? outer + inner : "\(outer).\(inner)"
    }
}

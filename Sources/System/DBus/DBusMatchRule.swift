/// A signal match rule (D-Bus Specification, "Match Rules"). Unset fields match anything.
public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
    /// A well-known or unique sender name; the bus resolves well-known names to their owner.
    public var sender: String?
    /// The signal's interface.
    public var interface: String?
    /// The signal's name.
    public var member: String?
    /// Exactly this object.
    public var path: String?
    /// Matches `path` and every object below it.
    public var pathNamespace: String?
    /// The specification's `arg0path`: the first argument, a string or an object path, equals
    /// this one, or one of the two ends in `/` and is a prefix of the other (`/a/b/` matches
    /// every object below `/a/b`).
    public var arg0Path: String?

    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: String? = nil,
        pathNamespace: String? = nil, arg0Path: String? = nil
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arg0Path = arg0Path
    }

    /// The rule in the bus's textual syntax.
    public var description: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        if let path { parts.append("path='\(path)'") }
        if let pathNamespace { parts.append("path_namespace='\(pathNamespace)'") }
        if let arg0Path { parts.append("arg0path='\(arg0Path)'") }
        return parts.joined(separator: ",")
    }
}

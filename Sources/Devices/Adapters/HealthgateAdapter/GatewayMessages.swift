public import GatewayRuntime

// What the gateway writes on an adapter's stdin (docs/adapter-protocol.md, "Gateway → adapter"),
// declared once like the adapter's messages.

/// The gateway's half of the handshake: the protocol version, the adapter's configuration block
/// and its last committed checkpoint.
public struct GatewayHello: AdapterMessageBody {
    public static let messageType = "hello"
    public static let summary = "The gateway's first message: the protocol version, the adapter's configuration and its last committed checkpoint"
    public var protocolVersion = AdapterProtocol.version
    /// The gateway's name and version, e.g. `healthgate 0.9.0`.
    public var gateway = ""
    /// The `exec` source's name in the gateway's configuration.
    public var name = ""
    /// The adapter's own block of the gateway's configuration (`{}` when none).
    public var config: JSONValue = .object([:])
    /// The adapter's last committed checkpoint's state; nil: none.
    public var checkpoint: JSONValue?
    /// The longest line the gateway reads, in bytes.
    public var maxLineBytes = AdapterProtocol.defaultMaxLineBytes

    public init() {}
    public init(gateway: String, name: String, config: JSONValue, checkpoint: JSONValue?, maxLineBytes: Int) {
        self.gateway = gateway
        self.name = name
        self.config = config
        self.checkpoint = checkpoint
        self.maxLineBytes = maxLineBytes
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("protocol", \.protocolVersion, .whole(0...1_000_000, unit: "version"), "The protocol version the gateway speaks: 1"),
            .required("gateway", \.gateway, .string(minLength: 1), "The gateway's name and version"),
            .required("name", \.name, .string(minLength: 1), "The exec source's name in the gateway's configuration"),
            .required("config", \.config, .delegated, "The adapter's own configuration block ({} when none)"),
            ConfigurationKey("checkpoint", \.checkpoint, .delegated, "The state of the adapter's last committed checkpoint; absent: none"),
            .required("maxLineBytes", \.maxLineBytes, .whole(1024...16_777_216, unit: "bytes"), "The longest line the gateway reads"),
        ]
    }
}

/// A checkpoint is on stable storage.
public struct AckMessage: AdapterMessageBody {
    public static let messageType = "ack"
    public static let summary = "A checkpoint is committed on stable storage: what it covers may be deleted on the device"
    public var state: JSONValue = .null

    public init() {}
    public init(state: JSONValue) { self.state = state }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [.required("state", \.state, .delegated, "The committed checkpoint's state")]
    }
}

/// A reading the gateway did not take.
public struct RefusedMessage: AdapterMessageBody {
    public static let messageType = "refused"
    public static let summary = "A reading the gateway did not take, and why"
    /// The number of the adapter's stdout line that held it, from 1.
    public var line = 1
    public var reason = ""
    /// The reading's `id`, when it had one.
    public var id: String?

    public init() {}
    public init(line: Int, reason: String, id: String?) {
        self.line = line
        self.reason = reason
        self.id = id
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("line", \.line, .whole(1...Int(Int64(1) << 53), unit: "lines"), "The number of the adapter's stdout line that held it, from 1"),
            .required("reason", \.reason, .string(minLength: 1), "Why it was refused"),
            ConfigurationKey("id", \.id, identifierShape, "The reading's id, when it had one"),
        ]
    }
}

/// A line that is no message, or a protocol the gateway does not speak.
public struct ErrorMessage: AdapterMessageBody {
    public static let messageType = "error"
    public static let summary = "A line that is not a message, or a protocol version the gateway does not speak"
    public var reason = ""
    /// True: the gateway stops the adapter.
    public var fatal = false

    public init() {}
    public init(reason: String, fatal: Bool = false) {
        self.reason = reason
        self.fatal = fatal
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("reason", \.reason, .string(minLength: 1), "What was wrong"),
            ConfigurationKey("fatal", \.fatal, .boolean, "True: the gateway stops the adapter"),
        ]
    }
}

/// The gateway stops: the adapter's stdin ends right after.
public struct StopMessage: AdapterMessageBody {
    public static let messageType = "stop"
    public static let summary = "The gateway stops; the adapter's stdin ends right after and it should exit"

    public init() {}
    public static var configurationKeys: [ConfigurationKey<Self>] { [] }
}

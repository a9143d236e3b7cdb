public import HealthgateAdapter

/// The adapter's block of the gateway's configuration: the `config` object of the gateway's
/// hello. Each key is declared once, here; decoding (strict: an unknown key is an error), the
/// range checks and the README's table (checked by a test) follow from the declarations.
public struct LineScaleConfiguration: DeclaredConfiguration, Equatable {
    /// The scale's port or file, absolute: a tty, a FIFO or a regular file.
    public var path = ""
    /// The scale's serial number: the device's id, and the first part of each reading's id.
    public var serial = ""
    /// The scale's model, for the device message.
    public var model = "LS-300"
    /// For a regular file: keep reading it as it grows (true), or stop at its end (false).
    public var follow = true

    /// The longest serial number: a reading's id, `<serial>/<date>`, must stay within the
    /// protocol's 256 characters.
    public static let maxSerialLength = 128
    /// The longest model name.
    public static let maxModelLength = 128

    public init() {}
    /// A configuration in code (tests, tools); the adapter decodes its own from the hello.
    public init(path: String, serial: String, model: String = "LS-300", follow: Bool = true) {
        self.path = path
        self.serial = serial
        self.model = model
        self.follow = follow
    }

    /// The keys, each declared once.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required(
                "path", \.path, .string(pattern: "^/", minLength: 2),
                "The scale's port or file, an absolute path: a tty, a FIFO or a regular file"),
            .required(
                "serial", \.serial, .string(minLength: 1, maxLength: maxSerialLength),
                "The scale's serial number: the device's id, and the first part of each reading's id"),
            ConfigurationKey("model", \.model, .string(minLength: 1, maxLength: maxModelLength), "The scale's model, in the device message"),
            ConfigurationKey(
                "follow", \.follow, .boolean,
                "For a regular file: true, keep reading it as it grows (looking every 0.5 s); false, stop at its end and wait for stop"),
        ]
    }

    /// The string rules the schema states, which the decoder does not check itself.
    public func checkDecoded() throws(PluginConfigurationError) {
        guard path.hasPrefix("/") else {
            throw PluginConfigurationError(keyPath: "path", reason: "must be an absolute path, got \"\(path)\"")
        }
        guard !serial.isEmpty, serial.count <= Self.maxSerialLength else {
            throw PluginConfigurationError(keyPath: "serial", reason: "must have 1 to \(Self.maxSerialLength) characters")
        }
        guard !model.isEmpty, model.count <= Self.maxModelLength else {
            throw PluginConfigurationError(keyPath: "model", reason: "must have 1 to \(Self.maxModelLength) characters")
        }
    }
}

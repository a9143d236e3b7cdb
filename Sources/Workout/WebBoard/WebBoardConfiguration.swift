import FoundationEssentials
public import GatewayRuntime
public import SampleBus

/// The configuration's `web` object: where the live board listens, and the token that guards it.
///
/// ```json
/// "web": {"listen": "127.0.0.1:8080", "tokenFile": "/etc/healthgate/board-token"}
/// ```
/// Absent: no board. `listen` is `IPv4:PORT` or `localhost:PORT` (port 0: any free port, logged).
/// A loopback address (127.0.0.0/8) needs no token; any other address needs `tokenFile`, a file
/// whose first line is the token. With a token every request must carry it, as `?token=…` (what
/// a browser's address bar and the page's event stream send) or `Authorization: Bearer …`.
/// Decoding is strict; ``validated(in:)`` reads nothing but the token file.
public struct WebBoardConfiguration: Sendable, Hashable, DeclaredConfiguration {
    /// Where to listen (a file must say it: the default is only `init()`'s placeholder).
    public var listen = ListenAddress.anyLoopbackPort
    /// The token's file; nil: no token (loopback only).
    public var tokenFile: String?

    /// Every key at its default.
    public init() {}

    /// A configuration.
    public init(listen: ListenAddress, tokenFile: String? = nil) {
        self.listen = listen
        self.tokenFile = tokenFile
    }

    /// Every key of the `web` object.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required(
                "listen", \.listen, .string(pattern: "^(localhost|[0-9]{1,3}(\\.[0-9]{1,3}){3}):[0-9]{1,5}$"),
                "IPv4:PORT or localhost:PORT (port 0: any free port); an address other than loopback needs tokenFile"),
            ConfigurationKey("tokenFile", \.tokenFile, .nonEmptyText, "A file whose first line is the token every request must carry"),
        ]
    }

    /// Decodes and checks the configuration's `web` value; nil when the board is off.
    /// - Throws: ``ConfigurationError`` naming `web.…`.
    /// `key`: the configuration's key the object is under (`web`, or `metrics` for the metrics'
    /// own listener), which errors name.
    public static func decode(
        _ value: JSONValue?, origin: String, key: String = "web"
    ) throws(ConfigurationError) -> WebBoardConfiguration? {
        guard let value, value != .null else { return nil }
        let configuration = try GatewayConfiguration.decodeSection(value, as: WebBoardConfiguration.self, key: key, origin: origin)
        try configuration.validate(origin: origin, key: key)
        return configuration
    }

    /// A non-loopback address needs a token; the token file must be readable and not empty.
    /// - Throws: ``ConfigurationError`` naming `KEY.listen` or `KEY.tokenFile` (`key`: `web` or
    ///   `metrics`).
    public func validate(origin: String, key: String = "web") throws(ConfigurationError) {
        guard let tokenFile else {
            guard listen.isLoopback else {
                throw ConfigurationError(
                    file: origin, keyPath: "\(key).listen",
                    reason: "\(listen) is not a loopback address; set \(key).tokenFile so that only holders of the token see "
                        + (key == "web" ? "the board" : "the metrics"))
            }
            return
        }
        _ = try Self.readToken(tokenFile, origin: origin, key: key)
    }

    /// The token: the first line of `tokenFile`, without surrounding white space; nil without one.
    /// - Throws: ``ConfigurationError`` naming `KEY.tokenFile` when it is unreadable or empty.
    public func token(origin: String, key: String = "web") throws(ConfigurationError) -> String? {
        try tokenFile.map { path throws(ConfigurationError) in try Self.readToken(path, origin: origin, key: key) }
    }

    private static func readToken(_ path: String, origin: String, key: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(file: origin, keyPath: "\(key).tokenFile", reason: "cannot read \(path)")
        }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        let token = line.trimmed()
        guard token.count >= 16 else {
            throw ConfigurationError(
                file: origin, keyPath: "\(key).tokenFile", reason: "\(path) holds no token of at least 16 characters")
        }
        return token
    }
}

/// An IPv4 address and a port to listen on; in a configuration, the text `IPv4:PORT` or
/// `localhost:PORT`.
public struct ListenAddress: Hashable, Sendable, ConfigurationText {
    /// The address's four bytes, most significant first.
    public var octets: [UInt8]
    /// The port; 0 lets the system choose.
    public var port: UInt16

    /// Parses `IPv4:PORT` or `localhost:PORT`.
    /// - Throws: ``PluginConfigurationError`` saying what is wrong.
    public init(parsing text: String) throws(PluginConfigurationError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let port = UInt16(parts[1]) else {
            throw PluginConfigurationError(keyPath: "listen", reason: "\"\(text)\" is not ADDRESS:PORT (e.g. 127.0.0.1:8080)")
        }
        let host = parts[0] == "localhost" ? "127.0.0.1" : String(parts[0])
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard octets.count == 4, host.split(separator: ".", omittingEmptySubsequences: false).count == 4 else {
            throw PluginConfigurationError(
                keyPath: "listen", reason: "\"\(parts[0])\" is not an IPv4 address or localhost")
        }
        self.octets = octets
        self.port = port
    }

    /// 127.0.0.1, any free port.
    public static let anyLoopbackPort = ListenAddress(octets: [127, 0, 0, 1], port: 0)

    private init(octets: [UInt8], port: UInt16) {
        self.octets = octets
        self.port = port
    }

    /// Whether it is in 127.0.0.0/8 (RFC 1122 §3.2.1.3: loopback, never on a network).
    public var isLoopback: Bool { octets.first == 127 }

    /// The address in network byte order, as `sin_addr.s_addr` holds it.
    var networkOrder: UInt32 {
        octets.withUnsafeBufferPointer { buffer in
            var value: UInt32 = 0
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(buffer)) }
            return value
        }
    }

    /// `A.B.C.D:PORT`.
    public var description: String { "\(octets.map(String.init).joined(separator: ".")):\(port)" }
}

public import GatewayRuntime
import FoundationEssentials

/// The adapter protocol's constants (docs/adapter-protocol.md).
public enum AdapterProtocol {
    /// The version this package speaks.
    public static let version = 1
    /// The versions the gateway accepts in an adapter's hello.
    public static let supportedVersions = [1]
    /// The longest line the gateway reads unless its configuration says otherwise: 64 KiB.
    public static let defaultMaxLineBytes = 65_536
}

/// One message of the adapter protocol: its `type` and its keys, each declared once
/// (``DeclaredConfiguration``), from which it is decoded (strictly), encoded and described in the
/// protocol's JSON Schema.
public protocol AdapterMessageBody: DeclaredConfiguration, Equatable {
    /// The message's `type`.
    static var messageType: String { get }
    /// What it says, for the schema.
    static var summary: String { get }
    /// A message of this type with every key set: the schema's example, and what the schema's
    /// agreement test breaks in every way.
    static var example: Self { get }
}

extension AdapterMessageBody {
    /// The message as one line of the protocol: compact JSON with its `type`, and a newline.
    public var line: [UInt8] {
        guard case .object(var members) = configurationJSON else { return [] }
        members["type"] = .string(Self.messageType)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A JSONValue always encodes (its numbers are finite: a message's are checked where made).
        guard let data = try? encoder.encode(JSONValue.object(members)) else { return [] }
        return Array(data) + [0x0A]
    }

    /// ``example`` as JSON, without its `type`.
    public static var exampleJSON: JSONValue { example.configurationJSON }

    /// The message's schema: an object with its `type` and its declared keys.
    public static var messageSchema: ConfigurationSchema {
        guard case .object(var object) = configurationSchema else { return configurationSchema }
        object.properties.insert(ConfigurationProperty("type", .constant(messageType), "The message's type"), at: 0)
        object.required.insert("type", at: 0)
        object.description = summary
        return .object(object)
    }
}

extension DeclaredConfiguration {
    /// Decodes `value` as the gateway decodes its messages and its configuration: numbers checked
    /// against their declared ranges, then strictly (an unknown key is an error, with a
    /// suggestion). For an adapter's own configuration and checkpoint
    /// (``GatewayHello/configuration(as:)``, ``GatewayHello/checkpoint(as:)``).
    /// - Throws: ``AdapterMessageError`` naming the key and what is wrong with it.
    public static func decoded(from value: JSONValue) throws(AdapterMessageError) -> Self {
        try decoded(from: value, checkedAgainst: configurationSchema)
    }

    /// ``decoded(from:)`` with the type's schema made once by the caller (a hot loop decodes
    /// many lines of one type: ``AdapterOutputDecoder``).
    static func decoded(from value: JSONValue, checkedAgainst schema: ConfigurationSchema) throws(AdapterMessageError) -> Self {
        do {
            try schema.check(value)
        } catch {
            throw AdapterMessageError(error.keyPath == ConfigurationKeyPath.topLevel ? error.reason : "\(error.keyPath): \(error.reason)")
        }
        // Most lines hold only plain values: decoded without Codable's containers, to the same value.
        if let plain = plainlyDecoded(from: value) { return plain }
        do {
            return try ConfigurationDecoder.decode(Self.self, from: value)
        } catch let error as DecodingError {
            var path = error.keyPath
            // An unknown or missing key's reason names the key: the path says where its object is.
            if let dot = path.lastIndex(where: { $0 == "." }), error.reason.contains("\"\(path[path.index(after: dot)...])\"") {
                path = String(path[..<dot])
            } else if !path.contains("."), !path.contains("["), error.reason.contains("\"\(path)\"") {
                path = ConfigurationKeyPath.topLevel
            }
            throw AdapterMessageError(path == ConfigurationKeyPath.topLevel ? error.reason : "\(path): \(error.reason)")
        } catch {
            throw AdapterMessageError(ErrorText.of(error))
        }
    }
}

extension GatewayHello {
    /// The adapter's configuration block decoded as `type` (keys declared once, decoded strictly).
    /// - Throws: ``AdapterMessageError`` naming the key and what is wrong with it.
    public func configuration<T: DeclaredConfiguration>(as type: T.Type) throws(AdapterMessageError) -> T {
        try T.decoded(from: config)
    }

    /// The adapter's last committed checkpoint decoded as `type`; nil when there is none.
    /// - Throws: ``AdapterMessageError`` when it is not a `type` (another adapter's, or an older
    ///   version's): the adapter decides whether to start over.
    public func checkpoint<T: DeclaredConfiguration>(as type: T.Type) throws(AdapterMessageError) -> T? {
        guard let checkpoint, checkpoint != .null else { return nil }
        return try T.decoded(from: checkpoint)
    }
}

/// Why a line is no message of the protocol.
public struct AdapterMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the key where one is.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A line's `type` and the rest of its object.
struct AdapterLine {
    var type: String
    var body: JSONValue

    /// Splits `bytes` (one line without its newline).
    init(_ bytes: some Collection<UInt8>) throws(AdapterMessageError) {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw AdapterMessageError("the line is not valid UTF-8") }
        let value: JSONValue
        do {
            value = try ConfigurationJSONParser.parse(bytes)
        } catch {
            throw AdapterMessageError("not JSON: \(error.reason) at column \(error.column)")
        }
        guard case .object(var members) = value else { throw AdapterMessageError("a message is a JSON object, not \(value.inWords)") }
        guard let type = members.removeValue(forKey: "type") else { throw AdapterMessageError("the message has no \"type\"") }
        guard case .string(let name) = type else { throw AdapterMessageError("type: expected a string, not \(type.inWords)") }
        self.type = name
        body = .object(members)
    }
}

/// A message an adapter writes on its stdout.
public enum AdapterOutput: Sendable, Equatable {
    case hello(AdapterHello)
    case device(DeviceMessage)
    case quantity(QuantityMessage)
    case correlation(CorrelationMessage)
    case heartbeats(HeartbeatsMessage)
    case checkpoint(CheckpointMessage)
    case log(LogMessage)
    case status(StatusMessage)

    /// Every message an adapter writes, in the order the schema lists them.
    public static let bodies: [any AdapterMessageBody.Type] = [
        AdapterHello.self, DeviceMessage.self, QuantityMessage.self, CorrelationMessage.self, HeartbeatsMessage.self,
        CheckpointMessage.self, LogMessage.self, StatusMessage.self,
    ]

    /// Decodes one line (without its newline).
    /// - Throws: ``AdapterMessageError``: not UTF-8, not JSON, an unknown `type` or key, a
    ///   missing key, a value of the wrong shape or out of its range.
    public init(line: some Collection<UInt8>) throws(AdapterMessageError) {
        self = try Self.decode(AdapterLine(line)) { $0.configurationSchema }
    }

    /// The message of `line`, each body checked against the schema `schema` gives for its type.
    static func decode(
        _ line: AdapterLine, schema: (any AdapterMessageBody.Type) -> ConfigurationSchema
    ) throws(AdapterMessageError) -> AdapterOutput {
        func body<T: AdapterMessageBody>(_ type: T.Type) throws(AdapterMessageError) -> T {
            try T.decoded(from: line.body, checkedAgainst: schema(type))
        }
        switch line.type {
        case AdapterHello.messageType: return .hello(try body(AdapterHello.self))
        case DeviceMessage.messageType: return .device(try body(DeviceMessage.self))
        case QuantityMessage.messageType: return .quantity(try body(QuantityMessage.self))
        case CorrelationMessage.messageType: return .correlation(try body(CorrelationMessage.self))
        case HeartbeatsMessage.messageType: return .heartbeats(try body(HeartbeatsMessage.self))
        case CheckpointMessage.messageType: return .checkpoint(try body(CheckpointMessage.self))
        case LogMessage.messageType: return .log(try body(LogMessage.self))
        case StatusMessage.messageType: return .status(try body(StatusMessage.self))
        default:
            throw AdapterMessageError(
                "unknown message type \"\(ConfigurationJSONParser.printable(line.type))\"; an adapter writes "
                    + bodies.map { "\"\($0.messageType)\"" }.joined(separator: ", "))
        }
    }

    /// The message as a line.
    public var line: [UInt8] {
        switch self {
        case .hello(let message): message.line
        case .device(let message): message.line
        case .quantity(let message): message.line
        case .correlation(let message): message.line
        case .heartbeats(let message): message.line
        case .checkpoint(let message): message.line
        case .log(let message): message.line
        case .status(let message): message.line
        }
    }
}

/// Decodes an adapter's lines, each message type's schema made once: what the gateway's reading
/// loop uses (``AdapterOutput/init(line:)`` makes the schema of the line's type for each line).
public struct AdapterOutputDecoder: Sendable {
    private let schemas: [String: ConfigurationSchema]

    public init() {
        schemas = Dictionary(uniqueKeysWithValues: AdapterOutput.bodies.map { ($0.messageType, $0.configurationSchema) })
    }

    /// The message of `line` (without its newline), as ``AdapterOutput/init(line:)`` decodes it.
    public func decode(_ line: some Collection<UInt8>) throws(AdapterMessageError) -> AdapterOutput {
        try AdapterOutput.decode(AdapterLine(line)) { schemas[$0.messageType] ?? $0.configurationSchema }
    }
}

/// A message the gateway writes on an adapter's stdin.
public enum GatewayInput: Sendable, Equatable {
    case hello(GatewayHello)
    case ack(AckMessage)
    case refused(RefusedMessage)
    case error(ErrorMessage)
    case stop
    /// A type this version does not know (a later gateway's): an adapter ignores it.
    case unknown(String)

    /// Every message the gateway writes, in the order the schema lists them.
    public static let bodies: [any AdapterMessageBody.Type] = [
        GatewayHello.self, AckMessage.self, RefusedMessage.self, ErrorMessage.self, StopMessage.self,
    ]

    /// Decodes one line (without its newline).
    /// - Throws: ``AdapterMessageError`` as ``AdapterOutput/init(line:)`` does, but an unknown
    ///   `type` is ``unknown(_:)``.
    public init(line: some Collection<UInt8>) throws(AdapterMessageError) {
        let line = try AdapterLine(line)
        switch line.type {
        case GatewayHello.messageType: self = .hello(try .decoded(from: line.body))
        case AckMessage.messageType: self = .ack(try .decoded(from: line.body))
        case RefusedMessage.messageType: self = .refused(try .decoded(from: line.body))
        case ErrorMessage.messageType: self = .error(try .decoded(from: line.body))
        case StopMessage.messageType:
            _ = try StopMessage.decoded(from: line.body)
            self = .stop
        default: self = .unknown(line.type)
        }
    }

    /// The message as a line.
    public var line: [UInt8] {
        switch self {
        case .hello(let message): message.line
        case .ack(let message): message.line
        case .refused(let message): message.line
        case .error(let message): message.line
        case .stop: StopMessage().line
        case .unknown(let type): Array(#"{"type":"\#(type)"}"#.utf8) + [0x0A]
        }
    }
}

extension AdapterProtocol {
    /// The protocol's JSON Schema (draft 2020-12): every message either way, from the
    /// declarations the gateway decodes with. `healthgate adapter schema` prints it;
    /// docs/adapter-protocol.schema.json holds it.
    public static var schemaDocument: JSONValue {
        func alternatives(_ bodies: [any AdapterMessageBody.Type]) -> JSONValue {
            ["oneOf": .array(bodies.map { $0.messageSchema.jsonSchema() })]
        }
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": .string("healthgate adapter protocol, version \(version): one message per line"),
            "$defs": ["adapterToGateway": alternatives(AdapterOutput.bodies), "gatewayToAdapter": alternatives(GatewayInput.bodies)],
            "anyOf": [["$ref": "#/$defs/adapterToGateway"], ["$ref": "#/$defs/gatewayToAdapter"]],
        ]
    }

    /// ``schemaDocument`` as `healthgate adapter schema` prints it and
    /// docs/adapter-protocol.schema.json holds it: indented, keys sorted.
    public static var schemaText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // A JSONValue of finite numbers always encodes.
        return (try? encoder.encode(schemaDocument)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

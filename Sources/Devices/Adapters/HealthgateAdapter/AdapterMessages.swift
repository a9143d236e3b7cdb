// An adapter that imports HealthgateAdapter gets the values its messages are made of: JSONValue
// and DeclaredConfiguration (GatewayRuntime), quantity types and units (HealthModel).
@_exported public import GatewayRuntime
@_exported public import HealthModel

// What an adapter writes on its stdout (docs/adapter-protocol.md, "Adapter → gateway"). Each
// message's keys are declared once, here: the gateway decodes with these declarations (strictly:
// an unknown key is an error), `healthgate adapter schema` writes the JSON Schema from them, and
// an adapter in Swift encodes with them.

/// The shape of an RFC 3339 date with a zone, as the messages' dates are written.
let dateShape = ConfigurationSchema.string(
    pattern: #"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"#)
/// A reading's own identifier: at most 256 characters.
let identifierShape = ConfigurationSchema.string(minLength: 1, maxLength: 256)
/// A free text.
let textShape = ConfigurationSchema.string(maxLength: 1024)

/// The adapter's half of the handshake: the protocol version it speaks and its name.
public struct AdapterHello: AdapterMessageBody {
    public static let messageType = "hello"
    public static let summary = "The adapter's answer to the gateway's hello: the protocol version it speaks and its name"
    /// The protocol version the adapter speaks (1).
    public var protocolVersion = AdapterProtocol.version
    /// The adapter's name, e.g. `cuff-csv`.
    public var adapter = ""
    /// The adapter's own version.
    public var version: String?

    public init() {}
    public init(adapter: String, version: String? = nil, protocolVersion: Int = AdapterProtocol.version) {
        self.adapter = adapter
        self.version = version
        self.protocolVersion = protocolVersion
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("protocol", \.protocolVersion, .whole(0...1_000_000, unit: "version"), "The protocol version the adapter speaks: 1"),
            .required("adapter", \.adapter, .string(minLength: 1, maxLength: 128), "The adapter's name"),
            ConfigurationKey("version", \.version, textShape, "The adapter's own version"),
        ]
    }
}

/// A device the adapter reads: readings name it by ``id``.
public struct DeviceMessage: AdapterMessageBody {
    public static let messageType = "device"
    public static let summary = "A device the adapter reads; readings name it by id, a later device message with the same id replaces it"
    /// The device's local identifier (its serial number or address).
    public var id = ""
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var serialNumber: String?
    public var hardwareVersion: String?
    public var firmwareVersion: String?
    public var softwareVersion: String?

    public init() {}
    public init(id: String, name: String? = nil, manufacturer: String? = nil, model: String? = nil, serialNumber: String? = nil) {
        self.id = id
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("id", \.id, identifierShape, "The device's local identifier: its serial number or address, stable across restarts"),
            ConfigurationKey("name", \.name, textShape, "The device's name for people"),
            ConfigurationKey("manufacturer", \.manufacturer, textShape, "Its manufacturer"),
            ConfigurationKey("model", \.model, textShape, "Its model"),
            ConfigurationKey("serialNumber", \.serialNumber, textShape, "Its serial number"),
            ConfigurationKey("hardwareVersion", \.hardwareVersion, textShape, "Its hardware version"),
            ConfigurationKey("firmwareVersion", \.firmwareVersion, textShape, "Its firmware version"),
            ConfigurationKey("softwareVersion", \.softwareVersion, textShape, "Its software version"),
        ]
    }
}

/// One quantity reading.
public struct QuantityMessage: AdapterMessageBody, AdapterReading {
    public static let messageType = "quantity"
    public static let summary = "One reading: a quantity type, a value in a unit, a date or an interval"
    public var quantityType = ""
    public var value = 0.0
    public var unit = ""
    public var start = ""
    public var end: String?
    public var id: String?
    public var version: Int?
    public var device: String?
    public var metadata: JSONValue?

    public init() {}
    public init(
        _ quantityType: QuantityType, value: Double, unit: HealthUnit, start: String, end: String? = nil, id: String? = nil,
        version: Int? = nil, device: String? = nil, metadata: JSONValue? = nil
    ) {
        self.quantityType = quantityType.identifier
        self.value = value
        self.unit = unit.unitString
        self.start = start
        self.end = end
        self.id = id
        self.version = version
        self.device = device
        self.metadata = metadata
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("quantityType", \.quantityType, quantityTypeShape, "The quantity type (healthgate units lists them with their units)"),
            .required("value", \.value, .number(-1e300...1e300, unit: "the unit's"), "The value, in unit"),
            .required("unit", \.unit, .string(minLength: 1, maxLength: 64), "The value's unit: any of the type's dimension (kg, lb, mmHg, count/min…)"),
            .required("start", \.start, dateShape, "When it was measured (RFC 3339, with a zone)"),
            ConfigurationKey("end", \.end, dateShape, "The end of the interval it covers; absent: start"),
        ] + readingKeys(id: \.id, version: \.version, device: \.device, metadata: \.metadata)
    }
}

/// One member of a correlation.
public struct CorrelationMember: DeclaredConfiguration, Equatable {
    public var quantityType = ""
    public var value = 0.0
    public var unit = ""
    public var start: String?
    public var end: String?

    public init() {}
    public init(_ quantityType: QuantityType, value: Double, unit: HealthUnit) {
        self.quantityType = quantityType.identifier
        self.value = value
        self.unit = unit.unitString
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("quantityType", \.quantityType, quantityTypeShape, "The member's quantity type"),
            .required("value", \.value, .number(-1e300...1e300, unit: "the unit's"), "The value, in unit"),
            .required("unit", \.unit, .string(minLength: 1, maxLength: 64), "The value's unit"),
            ConfigurationKey("start", \.start, dateShape, "When it was measured; absent: the correlation's start"),
            ConfigurationKey("end", \.end, dateShape, "The end of its interval; absent: the correlation's end"),
        ]
    }
}

/// Readings measured together (a blood pressure).
public struct CorrelationMessage: AdapterMessageBody, AdapterReading {
    public static let messageType = "correlation"
    public static let summary = "Readings measured together, kept as one record (bloodPressure)"
    public var correlationType = ""
    public var start = ""
    public var end: String?
    public var members: [CorrelationMember] = []
    public var id: String?
    public var version: Int?
    public var device: String?
    public var metadata: JSONValue?

    public init() {}
    public init(
        _ correlationType: CorrelationType, start: String, members: [CorrelationMember], id: String? = nil, device: String? = nil
    ) {
        self.correlationType = correlationType.identifier
        self.start = start
        self.members = members
        self.id = id
        self.device = device
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required(
                "correlationType", \.correlationType, .string(values: CorrelationType.builtIn.map(\.identifier)),
                "The correlation type"),
            .required("start", \.start, dateShape, "When it was measured (RFC 3339, with a zone)"),
            ConfigurationKey("end", \.end, dateShape, "The end of the interval it covers; absent: start"),
            .required("members", \.members, .array(CorrelationMember.configurationSchema, minItems: 1, maxItems: 64), "The readings measured together"),
        ] + readingKeys(id: \.id, version: \.version, device: \.device, metadata: \.metadata)
    }
}

/// One beat of a heartbeat series.
public struct Beat: DeclaredConfiguration, Equatable {
    public var offset = 0.0
    public var gap = false

    public init() {}
    public init(offset: Double, gap: Bool = false) {
        self.offset = offset
        self.gap = gap
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("offset", \.offset, .number(0...86_400, unit: "seconds"), "Seconds from the series' start to the beat"),
            ConfigurationKey("gap", \.gap, .boolean, "True when beats before this one were missed: the interval to the previous beat is no RR interval"),
        ]
    }
}

/// A heartbeat series.
public struct HeartbeatsMessage: AdapterMessageBody, AdapterReading {
    public static let messageType = "heartbeats"
    public static let summary = "A heartbeat series: beats by their offset from the series' start"
    public var start = ""
    public var beats: [Beat] = []
    public var id: String?
    public var version: Int?
    public var device: String?
    public var metadata: JSONValue?

    public init() {}
    public init(start: String, beats: [Beat], id: String? = nil, device: String? = nil) {
        self.start = start
        self.beats = beats
        self.id = id
        self.device = device
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("start", \.start, dateShape, "The series' start (RFC 3339, with a zone)"),
            .required("beats", \.beats, .array(Beat.configurationSchema, minItems: 1, maxItems: 4096), "The beats, in order"),
        ] + readingKeys(id: \.id, version: \.version, device: \.device, metadata: \.metadata)
    }
}

/// The adapter's resumable state.
public struct CheckpointMessage: AdapterMessageBody {
    public static let messageType = "checkpoint"
    public static let summary = "The adapter's resumable state: committed with every reading before it, given back in the next hello"
    public var state: JSONValue = .null

    public init() {}
    public init(state: JSONValue) { self.state = state }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [.required("state", \.state, .delegated, "The state, any JSON the adapter defines")]
    }
}

/// A line of the gateway's log.
public struct LogMessage: AdapterMessageBody {
    public static let messageType = "log"
    public static let summary = "A line of the gateway's log, under the source's name"
    public var message = ""
    public var level = LogLevel.info
    public var device: String?

    public init() {}
    public init(_ message: String, level: LogLevel = .info, device: String? = nil) {
        self.message = message
        self.level = level
        self.device = device
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("message", \.message, .string(maxLength: 4096), "The line"),
            ConfigurationKey("level", \.level, .string(values: LogLevel.allCases.map(\.rawValue)), "Its level"),
            ConfigurationKey("device", \.device, identifierShape, "The device it is about (a device message's id)"),
        ]
    }
}

/// The adapter's state, for `healthgate status`.
public struct StatusMessage: AdapterMessageBody {
    public static let messageType = "status"
    public static let summary = "The adapter's state, shown by healthgate status"
    public var state = ""
    public var detail: String?

    public init() {}
    public init(state: String, detail: String? = nil) {
        self.state = state
        self.detail = detail
    }

    public static var configurationKeys: [ConfigurationKey<Self>] {
        [
            .required("state", \.state, .string(minLength: 1, maxLength: 128), "The state in a few words (connected, waiting for files)"),
            ConfigurationKey("detail", \.detail, textShape, "More about it"),
        ]
    }
}

/// The shape of a quantity type's name: the built-in types'.
let quantityTypeShape = ConfigurationSchema.string(values: QuantityType.builtIn.map(\.identifier))

/// What every reading message has beside its values: its identity, device and metadata.
public protocol AdapterReading: Sendable {
    /// The adapter's stable identifier of the reading.
    var id: String? { get set }
    /// Its version: a higher one replaces the stored reading with the same id.
    var version: Int? { get set }
    /// The `id` of the device message that describes its device.
    var device: String? { get set }
    /// Extra metadata: strings, numbers and booleans by key.
    var metadata: JSONValue? { get set }
}

extension AdapterReading where Self: DeclaredConfiguration {
    /// The keys every reading has, declared once. Each type passes its own key paths: written in
    /// the concrete type, a key path is made once and kept, while one written here, generic over
    /// `Self`, would be made again on every decoding of every line.
    static func readingKeys(
        id: any WritableKeyPath<Self, String?> & Sendable, version: any WritableKeyPath<Self, Int?> & Sendable,
        device: any WritableKeyPath<Self, String?> & Sendable, metadata: any WritableKeyPath<Self, JSONValue?> & Sendable
    ) -> [ConfigurationKey<Self>] {
        [
            ConfigurationKey("id", id, identifierShape, "The adapter's stable identifier of the reading: the same reading sent again has the same id"),
            ConfigurationKey("version", version, .whole(1...Int(Int32.max), unit: "version"), "Its version (default 1): a higher one replaces the stored reading"),
            ConfigurationKey("device", device, identifierShape, "The id of the device message describing its device"),
            ConfigurationKey("metadata", metadata, .delegated, "Extra metadata: an object of strings, numbers and booleans"),
        ]
    }
}

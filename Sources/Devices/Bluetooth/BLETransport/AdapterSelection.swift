public import GatewayRuntime

/// Which Bluetooth adapters a source uses: named ones, or every adapter the stack has
/// (`"adapters": ["hci0", "hci1"]` or `"adapters": "all"`, in a source or in the gateway's
/// `bluetooth` section). `all` is resolved when the source starts
/// (``BluetoothAdapters/resolve(_:)``): an adapter plugged in later is used after a restart.
public enum AdapterSelection: Decodable, Sendable, Hashable, ExpressibleByArrayLiteral {
    /// Every adapter the stack lists when the source starts.
    case all
    /// These adapters, in this order (the order breaks ties between adapters).
    case named([String])

    /// `["hci0", "hci1"]`.
    public init(arrayLiteral elements: String...) {
        self = .named(elements)
    }

    /// `"all"` or an array of adapter names.
    // A value written as a string or an array, not an object of keys: DeclaredConfiguration
    // decodes objects only, so this value decodes itself (as DeviceSelection does).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard text == "all" else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected \"all\" or an array of adapter names, got \"\(text)\"")
            }
            self = .all
            return
        }
        self = .named(try container.decode([String].self))
    }

    /// The names given, nil for `all`.
    public var names: [String]? {
        switch self {
        case .all: nil
        case .named(let names): names
        }
    }
}

extension AdapterSelection: ConfigurationValue, ConfigurationSchemaDeclaring {
    /// `"all"` or the names, as a file gives them.
    public var configurationJSON: JSONValue {
        switch self {
        case .all: .string("all")
        case .named(let names): .array(names.map { .string($0) })
        }
    }

    /// `"all"`, or a list of one or more adapter names (no `/`).
    public static var configurationSchema: ConfigurationSchema {
        .oneOf([.string(values: ["all"]), .array(.string(pattern: "^[^/]+$", minLength: 1), minItems: 1)])
    }
}


/// A type whose configuration keys were renamed: an old name is an unknown key, and the error
/// suggests the new one.
public protocol RenamedConfigurationKeys {
    /// Old key → new key, for this type's own object.
    static var renamedKeys: [String: String] { get }
}

/// Decodes a configuration type from a parsed ``JSONValue``, strictly:
///
/// - a key that no decoder asked for is an error (`unknown key "sorces"; did you mean
///   "sources"?`) at every level, so a typo never silently falls back to a default;
/// - a whole number must be integral and within ±2⁵³ (so converting it never traps), a
///   fractional number must be finite;
/// - a string must not contain NUL, which would truncate a path at the C boundary.
///
/// Errors are `DecodingError`s whose coding path is the key path inside the value. Decoding does
/// no I/O. A ``JSONValue`` field is taken as it is: it is decoded later, strictly, by its owner.
public enum ConfigurationDecoder {
    /// Decodes `type` from `value`.
    /// - Throws: `DecodingError` naming the key path and the reason.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let state = StrictDecodingState()
        let decoder = StrictDecoder(value: value, codingPath: [], state: state)
        let result: T
        do {
            result = try decoder.decodeValue(T.self)
        } catch let error as DecodingError {
            // A misspelt required key shows up first as a missing key: name the typo instead.
            if case .keyNotFound(let key, let context) = error,
                let unknown = state.unknownKeyError(under: context.codingPath, closeTo: key.stringValue)
            {
                throw unknown
            }
            throw error
        }
        if let unknown = state.unknownKeyError(under: nil) { throw unknown }
        // A type with no keys never asks for a container: any key in its object is unknown.
        if case .object(let object) = value, let name = object.keys.sorted().first,
            state.visits[DecodingError.format([])] == nil
        {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [StrictCodingKey(name)],
                debugDescription: "unknown key \"\(ConfigurationJSONParser.printable(name))\"; this object takes no keys"))
        }
        return result
    }

    /// A number as a person wrote it: `3`, `0.25`, `1e+300`; ±infinity (a literal beyond the
    /// range of a double, such as `1e400`) as "a number beyond ±1.8e308".
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "a number beyond ±1.8e308" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// The keys each keyed container was asked for, by path, to find unknown keys afterwards.
final class StrictDecodingState {
    struct Visit {
        var codingPath: [any CodingKey]
        var object: [String: JSONValue]
        var queried: Set<String> = []
    }

    private(set) var visits: [String: Visit] = [:]
    private var order: [String] = []
    private var renames: [String: [String: String]] = [:]
    private var refused: [String: Set<String>] = [:]

    func register(_ path: [any CodingKey], object: [String: JSONValue]) {
        let key = DecodingError.format(path)
        if visits[key] == nil {
            visits[key] = Visit(codingPath: path, object: object)
            order.append(key)
        }
    }

    func queried(_ path: [any CodingKey], _ name: String) {
        visits[DecodingError.format(path)]?.queried.insert(name)
    }

    /// Keys at `path` that are refused when present: left out of the known keys.
    func refuse(_ path: [any CodingKey], _ names: [String]) {
        refused[DecodingError.format(path), default: []].formUnion(names)
    }

    func registerRenames(_ path: [any CodingKey], _ table: [String: String]) {
        renames[DecodingError.format(path), default: [:]].merge(table) { _, new in new }
    }

    /// The first unknown key, in decoding order; with `prefix`, only below that path.
    func unknownKeyError(under prefix: [any CodingKey]?, closeTo missing: String? = nil) -> DecodingError? {
        let prefixText = prefix.map { DecodingError.format($0) }
        for pathKey in order {
            guard let visit = visits[pathKey] else { continue }
            if let prefixText, pathKey != prefixText { continue }
            for name in visit.object.keys.sorted() where !visit.queried.contains(name) {
                // For a missing required key, only a near miss of that key counts as its typo.
                if let missing, KeySuggestion.closest(to: name, among: [missing]) == nil { continue }
                let known = Array(visit.queried.union(missing.map { [$0] } ?? []).subtracting(refused[pathKey] ?? [])).sorted()
                let suggestion = renames[pathKey]?[name] ?? KeySuggestion.suggestion(for: name, among: known)
                var reason = "unknown key \"\(ConfigurationJSONParser.printable(name))\""
                if let suggestion {
                    reason += "; did you mean \"\(suggestion)\"?"
                } else if !known.isEmpty {
                    reason += "; known keys: \(known.joined(separator: ", "))"
                } else {
                    reason += "; this object takes no keys"
                }
                return DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: visit.codingPath + [StrictCodingKey(name)], debugDescription: reason))
            }
        }
        return nil
    }
}

struct StrictCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(index: Int) {
        stringValue = "\(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}

struct StrictDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let state: StrictDecodingState
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw mismatch([String: JSONValue].self, "an object")
        }
        state.register(codingPath, object: object)
        return KeyedDecodingContainer(StrictKeyedContainer<Key>(object: object, codingPath: codingPath, state: state))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else { throw mismatch([JSONValue].self, "an array") }
        return StrictUnkeyedContainer(array: array, codingPath: codingPath, state: state)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        DecodingError.typeMismatch(type, DecodingError.Context(
            codingPath: codingPath, debugDescription: "expected \(expected), got \(Self.describe(value))"))
    }

    func corrupted(_ reason: String) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath, debugDescription: reason))
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .number(let number): ConfigurationDecoder.format(number)
        case .string(let text):
            "the string \"\(ConfigurationJSONParser.printable(String(text.prefix(60))))\(text.count > 60 ? "…" : "")\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self, let value = value as? T { return value }
        if let renamed = T.self as? any RenamedConfigurationKeys.Type {
            state.registerRenames(codingPath, renamed.renamedKeys)
        }
        // Scalars reach decodeString, decodeWhole and the rest through their own init(from:).
        do {
            return try T(from: self)
        } catch DecodingError.dataCorrupted(let context)
            where context.codingPath.count == codingPath.count && context.debugDescription.hasPrefix("Cannot initialize")
        {
            // Swift's RawRepresentable decoding names the Swift type; name the accepted values.
            var reason = "\(Self.describe(value)) is not an accepted value"
            if let allowed = Self.allowedValues(T.self) { reason += "; expected one of: \(allowed.joined(separator: ", "))" }
            throw corrupted(reason)
        }
    }

    static func allowedValues(_ type: Any.Type) -> [String]? {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        return names(iterable)
    }

    private static func names<C: CaseIterable>(_ type: C.Type) -> [String] {
        C.allCases.map { value in
            if let raw = value as? any RawRepresentable { "\(raw.rawValue)" } else { "\(value)" }
        }
    }

    func decodeString() throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, "a string") }
        guard !text.unicodeScalars.contains("\u{0}") else {
            throw corrupted("the string contains a NUL character (\\u0000), which no setting accepts")
        }
        return text
    }

    func decodeBool() throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, "true or false") }
        return flag
    }

    func decodeDouble() throws -> Double {
        guard case .number(let number) = value else { throw mismatch(Double.self, "a number") }
        guard number.isFinite else {
            throw corrupted("out of range: \(ConfigurationDecoder.format(number))")
        }
        return number
    }

    /// A whole number that fits `T` and is exact in a double (±2⁵³), as an Int64 that converts
    /// to `T` without trapping.
    func decodeWhole<T: FixedWidthInteger>(_ type: T.Type) throws -> Int64 {
        guard case .number(let number) = value else { throw mismatch(T.self, "a whole number") }
        let exact: Double = 9_007_199_254_740_992
        let lower = max(Double(T.min), -exact)
        let upper = min(Double(T.max), exact)
        guard number.isFinite, number >= lower, number <= upper else {
            throw corrupted(
                "out of range: \(ConfigurationDecoder.format(number)) (a whole number from "
                    + "\(ConfigurationDecoder.format(lower)) to \(ConfigurationDecoder.format(upper)) is expected)")
        }
        guard number == number.rounded() else {
            throw corrupted("out of range: \(ConfigurationDecoder.format(number)) is not a whole number")
        }
        // In range and integral, checked above, so the conversion is exact.
        return Int64(number)
    }
}

extension StrictDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try decodeBool() }
    func decode(_ type: String.Type) throws -> String { try decodeString() }
    func decode(_ type: Double.Type) throws -> Double { try decodeDouble() }
    func decode(_ type: Float.Type) throws -> Float { Float(try decodeDouble()) }
    func decode(_ type: Int.Type) throws -> Int { Int(try decodeWhole(Int.self)) }
    func decode(_ type: Int8.Type) throws -> Int8 { Int8(try decodeWhole(Int8.self)) }
    func decode(_ type: Int16.Type) throws -> Int16 { Int16(try decodeWhole(Int16.self)) }
    func decode(_ type: Int32.Type) throws -> Int32 { Int32(try decodeWhole(Int32.self)) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decodeWhole(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { UInt(try decodeWhole(UInt.self)) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { UInt8(try decodeWhole(UInt8.self)) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { UInt16(try decodeWhole(UInt16.self)) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { UInt32(try decodeWhole(UInt32.self)) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { UInt64(try decodeWhole(UInt64.self)) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(T.self) }
}

struct StrictKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let codingPath: [any CodingKey]
    let state: StrictDecodingState

    var allKeys: [Key] {
        object.keys.sorted().compactMap { name in
            state.queried(codingPath, name)
            return Key(stringValue: name)
        }
    }

    func contains(_ key: Key) -> Bool {
        state.queried(codingPath, key.stringValue)
        return object[key.stringValue] != nil
    }

    private func child(_ key: Key) throws -> StrictDecoder {
        state.queried(codingPath, key.stringValue)
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(
                codingPath: codingPath, debugDescription: "required key \"\(key.stringValue)\" is missing"))
        }
        return StrictDecoder(value: value, codingPath: codingPath + [key], state: state)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        state.queried(codingPath, key.stringValue)
        return object[key.stringValue] == nil || object[key.stringValue] == .null
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try child(key).decodeValue(T.self)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        state.queried(codingPath, key.stringValue)
        guard let value = object[key.stringValue], value != .null else { return nil }
        return try StrictDecoder(value: value, codingPath: codingPath + [key], state: state).decodeValue(T.self)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        StrictDecoder(value: .object(object), codingPath: codingPath, state: state)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

struct StrictUnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    let state: StrictDecodingState
    var currentIndex = 0

    init(array: [JSONValue], codingPath: [any CodingKey], state: StrictDecodingState) {
        self.array = array
        self.codingPath = codingPath
        self.state = state
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next() throws -> StrictDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, DecodingError.Context(
                codingPath: codingPath + [StrictCodingKey(index: currentIndex)], debugDescription: "the array ended"))
        }
        let decoder = StrictDecoder(
            value: array[currentIndex], codingPath: codingPath + [StrictCodingKey(index: currentIndex)], state: state)
        currentIndex += 1
        return decoder
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, array[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

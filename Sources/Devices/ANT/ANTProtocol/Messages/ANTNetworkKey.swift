/// An ANT network key: 8 bytes that a channel's network must share with the devices it hears.
/// The ANT+ key is licensed to ANT+ adopters and is never part of healthgate: the user provides
/// it in a file.
///
/// Its description never shows the bytes (`<8-byte network key>`), so a key cannot reach a log
/// through string interpolation; ``bytes`` is for the one message that sends it to the stick.
public struct ANTNetworkKey: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key's 8 bytes.
    public let bytes: [UInt8]

    /// A key from exactly 8 bytes; nil otherwise.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 8 else { return nil }
        self.bytes = bytes
    }

    /// Parses 8 bytes written as hex: 16 digits, optionally separated by spaces, commas, colons
    /// or dashes, each byte optionally prefixed `0x`, surrounding whitespace ignored. Nil for
    /// anything else. The text is never echoed by callers: it is a secret.
    public init?(hex text: some StringProtocol) {
        var digits: [Character] = []
        for token in text.split(whereSeparator: { $0.isWhitespace || ",:-".contains($0) }) {
            let body = token.hasPrefix("0x") || token.hasPrefix("0X") ? token.dropFirst(2) : token[...]
            guard !body.isEmpty, body.count.isMultiple(of: 2), body.allSatisfy(\.isHexDigit) else { return nil }
            digits.append(contentsOf: body)
        }
        guard digits.count == 16 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 16, by: 2) {
            guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.init(bytes: bytes)
    }

    /// A random key: what a simulated stick and tests use, never the ANT+ one.
    public static func random() -> ANTNetworkKey {
        ANTNetworkKey(checked: (0..<8).map { _ in UInt8.random(in: 0...255) })
    }

    private init(checked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// `<8-byte network key>`: never the bytes.
    public var description: String { "<8-byte network key>" }
    /// `<8-byte network key>`: never the bytes.
    public var debugDescription: String { description }
}

import BuiltinPlugins
import GATTDecoding
import FoundationEssentials
import SampleBus

/// `healthgate decode PAYLOAD HEX…`: decodes one payload (a GATT characteristic, an ANT+ page)
/// with the gateway's own decoders and prints it as JSON. The subcommands are the decoders every
/// plugin in the catalog offers (``PluginCatalog/payloadDecoders``), whatever its family.
enum DecodeCommand {
    static let command = Command(
        name: "decode", summary: "Decode a device payload (hex: a Bluetooth GATT characteristic, an ANT+ page) and print it as JSON.",
        usage: "decode SUBCOMMAND HEX…",
        subcommands: decoders(in: BuiltinCatalog.make()).map(leaf))

    /// The decoders of every source in `catalog`, in catalog order.
    static func decoders(in catalog: PluginCatalog) -> [PayloadDecoder] {
        catalog.payloadDecoders
    }

    /// The subcommand of one decoder.
    static func leaf(_ decoder: PayloadDecoder) -> Command {
        Command(
            name: decoder.name, summary: "Decode a \(decoder.summary)", usage: "decode \(decoder.name) HEX…",
            discussion: """
                HEX is the payload as hex digits, in one word or several (00 48 is "00 48"); \
                spaces, colons and a 0x prefix are allowed.
                Prints one JSON object with the keys: \(decoder.keys).

                Example:
                  \(decoder.example)

                Exits 65 with the reason on stderr when the payload is not valid.
                """
        ) { arguments, context in
            guard !arguments.positional.isEmpty else { throw CommandError(.usage, "missing the HEX payload") }
            let bytes: [UInt8]
            do {
                // Typed unquoted, a payload with spaces arrives as several words: the same bytes.
                bytes = try HexPayload.parse(arguments.positional.joined(separator: " "))
            } catch let error as HexPayload.ParseError {
                // The argument may be huge (an attacker's 128 KB): quote only its start.
                throw CommandError(
                    .dataError, "\(DecodeCommand.quoted(error.text)) is not a hex payload: \(error.reason)")
            } catch {
                throw CommandError(.dataError, DecodeCommand.abbreviated("\(error)"))
            }
            let output: any Encodable & Sendable
            do {
                output = try decoder.decode(bytes)
            } catch {
                throw CommandError(.dataError, DecodeCommand.abbreviated("\(error)"))
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(output)
            context.print(String(decoding: data, as: UTF8.self))
            return .success
        }
    }
}


extension DecodeCommand {
    /// The most characters of an argument an error message repeats.
    static let quoteLimit = 64

    /// `"TEXT"`, or its first ``quoteLimit`` characters and its size when it is longer.
    static func quoted(_ text: String) -> String {
        guard text.count > quoteLimit else { return "\"\(text)\"" }
        return "\"\(text.prefix(quoteLimit))…\" (\(text.utf8.count) bytes)"
    }

    /// `message`, cut to a readable length with the number of bytes left out.
    static func abbreviated(_ message: String, limit: Int = 300) -> String {
        guard message.count > limit else { return message }
        let kept = message.prefix(limit)
        return "\(kept)… (\(message.utf8.count - kept.utf8.count) more bytes)"
    }
}

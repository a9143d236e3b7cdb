import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import HealthgateAdapter
import XCTest

/// The protocol's messages: what each line decodes to, the specific error of every line that is
/// no message, and the schema: the checked-in file is what the declarations generate, and an
/// independent validator (the `jsonschema` package) agrees with the decoder on every message
/// and on every way of breaking one.
final class AdapterMessageTests: XCTestCase {
    private func output(_ text: String) throws -> AdapterOutput { try AdapterOutput(line: Array(text.utf8)) }

    private func error(_ text: String) -> String? {
        do throws(AdapterMessageError) {
            _ = try AdapterOutput(line: Array(text.utf8))
            return nil
        } catch {
            return error.reason
        }
    }

    func testEveryMessageGoesThroughItsLineAndBack() throws {
        let messages: [AdapterOutput] = [
            .hello(AdapterHello(adapter: "cuff-csv", version: "1.0")),
            .device(DeviceMessage(id: "BP-1", name: "Cuff", manufacturer: "Acme", model: "BP-7", serialNumber: "123")),
            .quantity(QuantityMessage(.bodyMass, value: 72.5, unit: .kilogram, start: "2026-11-29T08:00:00Z", id: "x", version: 2, device: "BP-1", metadata: ["a": 1])),
            .correlation(CorrelationMessage(
                .bloodPressure, start: "2026-11-29T08:00:00Z",
                members: [CorrelationMember(.bloodPressureSystolic, value: 120, unit: .millimeterOfMercury), CorrelationMember(.bloodPressureDiastolic, value: 80, unit: .millimeterOfMercury)],
                id: "bp", device: "BP-1")),
            .heartbeats(HeartbeatsMessage(start: "2026-11-29T08:00:00Z", beats: [Beat(offset: 0), Beat(offset: 0.8), Beat(offset: 2.5, gap: true)], id: "hb")),
            .checkpoint(CheckpointMessage(state: ["files": ["a.csv": 3]])),
            .log(LogMessage("hello", level: .warning, device: "BP-1")),
            .status(StatusMessage(state: "connected", detail: "2 files")),
        ]
        for message in messages {
            XCTAssertEqual(try AdapterOutput(line: message.line.dropLast()), message, String(decoding: message.line, as: UTF8.self))
            XCTAssertEqual(message.line.last, 0x0A)
            XCTAssertFalse(message.line.dropLast().contains(0x0A), "one line")
        }
        let gateway: [GatewayInput] = [
            .hello(GatewayHello(gateway: "healthgate", name: "cuff", config: ["folder": "/srv"], checkpoint: ["sent": 4], maxLineBytes: 65_536)),
            .ack(AckMessage(state: ["sent": 4])), .refused(RefusedMessage(line: 3, reason: "no", id: "x")),
            .error(ErrorMessage(reason: "bad", fatal: true)), .stop,
        ]
        for message in gateway {
            XCTAssertEqual(try GatewayInput(line: message.line.dropLast()), message)
        }
        XCTAssertEqual(try GatewayInput(line: Array(#"{"type":"later","x":1}"#.utf8)), .unknown("later"), "a later gateway's message is ignorable")
    }

    func testALineThatIsNoMessageSaysWhatIsWrongWithIt() {
        XCTAssertEqual(error(#"{"type":"quantity","quantityType":"heartRate","value":60,"unit":"count/min"}"#), #"required key "start" is missing"#)
        XCTAssertEqual(error(#"{"type":"log","mesage":"x"}"#), #"unknown key "mesage"; did you mean "message"?"#)
        XCTAssertEqual(error(#"{"type":"wether"}"#)?.hasPrefix(#"unknown message type "wether"; an adapter writes "hello", "device""#), true)
        XCTAssertEqual(error(#"["type"]"#), "a message is a JSON object, not an array")
        XCTAssertEqual(error(#"{"value":1}"#), #"the message has no "type""#)
        XCTAssertEqual(error(#"{"type":"heartbeats","start":"2026-11-29T08:00:00Z","beats":[{"offset":-1}]}"#)?.hasPrefix("beats[0].offset: "), true)
        XCTAssertEqual(error(#"{"type":"log","message":"x","level":"loud"}"#)?.hasPrefix("level: "), true)
        XCTAssertEqual(error(#"{"type":"hello","protocol":1.5,"adapter":"x"}"#)?.hasPrefix("protocol: "), true)
        XCTAssertEqual(error("{\"type\":\"log\",\"message\":\"\u{0}\"}")?.contains("NUL"), true, "a raw control character is named")
        XCTAssertEqual(error("{\"type\":\"log\""), "not JSON: unexpected end of input, expected ',' or '}' at column 14")
        do throws(AdapterMessageError) {
            _ = try AdapterOutput(line: [0x7B, 0xFF, 0x7D])
            XCTFail("invalid UTF-8 decoded")
        } catch {
            XCTAssertEqual(error.reason, "the line is not valid UTF-8")
        }
    }

    /// docs/adapter-protocol.schema.json is what the declarations generate.
    func testTheCheckedInSchemaIsWhatTheDeclarationsGenerate() throws {
        let file = HealthgateExecutable.packageRoot().appendingPathComponent("docs/adapter-protocol.schema.json")
        let checkedIn = try String(contentsOf: file, encoding: .utf8)
        XCTAssertTrue(
            checkedIn == AdapterProtocol.schemaText + "\n",
            "docs/adapter-protocol.schema.json is stale: run `.build/debug/healthgate adapter schema > docs/adapter-protocol.schema.json`")
    }

    /// Every message, and each one broken in every way a key can be (missing, unknown, of another
    /// type, out of its range), judged by the decoder and by the `jsonschema` package against
    /// the schema: the same verdict for every line.
    func testAnIndependentValidatorAgreesWithTheDecoderOnEveryMessageAndEveryBreakage() async throws {
        var lines: [(text: String, adapter: Bool)] = []
        func examples(_ bodies: [any AdapterMessageBody.Type], adapter: Bool) {
            for body in bodies {
                guard case .object(var members) = body.exampleJSON else { continue }
                members["type"] = .string(body.messageType)
                lines.append((JSONValue.object(members).text, adapter))
                guard case .object(let object) = body.messageSchema else { continue }
                for property in object.properties where property.name != "type" {
                    var broken = members
                    if object.required.contains(property.name) {
                        broken[property.name] = nil
                        lines.append((JSONValue.object(broken).text, adapter))
                    }
                    broken = members
                    switch property.schema {
                    case .delegated: break
                    case .array: broken[property.name] = "x"
                    default: broken[property.name] = .array([])
                    }
                    if case .delegated = property.schema {} else { lines.append((JSONValue.object(broken).text, adapter)) }
                    if case .number(let rule) = property.schema {
                        broken[property.name] = .number(rule.range.upperBound * 2 + 1)
                        lines.append((JSONValue.object(broken).text, adapter))
                    }
                }
                var unknown = members
                unknown["colour"] = "red"
                lines.append((JSONValue.object(unknown).text, adapter))
            }
        }
        examples(AdapterOutput.bodies, adapter: true)
        examples(GatewayInput.bodies, adapter: false)
        let schema = FileManager.default.temporaryDirectory.appendingPathComponent("adapter-schema-\(UUID().uuidString).json")
        try Data(AdapterProtocol.schemaText.utf8).write(to: schema)
        defer { try? FileManager.default.removeItem(at: schema) }
        let input = lines.map { "\($0.adapter ? "adapterToGateway" : "gatewayToAdapter") \($0.text)" }.joined(separator: "\n") + "\n"
        let result = try await TestPython.run("Tests/Fixtures/validate_adapter_lines.py", [schema.path], input: Data(input.utf8))
        XCTAssertEqual(result.status, 0, result.errors)
        let verdicts = result.output.split(separator: "\n").map(String.init)
        XCTAssertEqual(verdicts.count, lines.count)
        XCTAssertGreaterThan(lines.count, 100)
        for (line, verdict) in zip(lines, verdicts) {
            assertPlainDecodingAgrees(line.text)
            let decoded: Bool
            if line.adapter {
                decoded = (try? AdapterOutput(line: Array(line.text.utf8))) != nil
            } else {
                decoded = (try? GatewayInput(line: Array(line.text.utf8))) != nil
            }
            XCTAssertEqual(decoded, verdict == "valid", "\(line.text): the schema says \(verdict)")
        }
    }
}

extension AdapterMessageTests {
    /// A line whose body the plain decoder takes (``DeclaredConfiguration/plainlyDecoded(from:)``)
    /// is the value the strict decoder gives; one it leaves, the strict decoder decodes or refuses.
    func assertPlainDecodingAgrees(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .object(var members)? = try? ConfigurationJSONParser.parse(Array(text.utf8)),
            case .string(let type)? = members.removeValue(forKey: "type")
        else { return }
        let body = JSONValue.object(members)
        func compare<T: AdapterMessageBody>(_: T.Type) {
            guard let plain = T.plainlyDecoded(from: body) else { return }
            XCTAssertEqual(plain, try? ConfigurationDecoder.decode(T.self, from: body), text, file: file, line: line)
        }
        for body in AdapterOutput.bodies + GatewayInput.bodies where body.messageType == type {
            compare(body)
        }
    }
}

extension JSONValue {
    /// Compact JSON text.
    fileprivate var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

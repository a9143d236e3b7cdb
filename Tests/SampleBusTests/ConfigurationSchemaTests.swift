import Foundation
import GatewayRuntime
import GatewayTesting
import SampleBus
import XCTest

/// The declared ranges: `check` refuses a number outside its range with the key path, the value,
/// the range and the unit (through the catalog and through a whole file's schema), and
/// `jsonSchema()` writes the same declarations as JSON Schema.
final class ConfigurationSchemaTests: XCTestCase {
    private let catalog = PluginCatalog([.source(TickSource.self), .sink(BatchSink.self), .source(BrokenSource.self)])

    private var fileSchema: ConfigurationSchema {
        GatewayConfiguration.schema(
            catalog: catalog,
            sections: GatewayConfiguration.OwnedSections(
                store: .object([]), web: .object([]), profile: .object([]), participants: .array(.text),
                bluetooth: .object([ConfigurationProperty("connections", .whole(1...20, unit: "links"), "A limit of a family section")])))
    }

    private func refusal(_ json: String) -> ConfigurationError? {
        do {
            let configuration = try GatewayConfiguration.parse(Data(json.utf8), origin: "/etc/hg.json", schema: fileSchema)
            try catalog.validate(configuration) { name in
                TestEnvironment.make(name: name, directory: URL(fileURLWithPath: "/nonexistent-healthgate-test"))
            }
            return nil
        } catch {
            return error
        }
    }

    func testANumberOutsideItsRangeIsRefusedWithPathValueRangeAndUnit() {
        let rows: [(String, String, String)] = [
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1e-300}}]}"#,
             "sources[0].config.interval", "1e-300 is below the smallest accepted value 0.001 (seconds)"),
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 4000}}]}"#,
             "sources[0].config.interval", "4000 is above the largest accepted value 3600 (seconds)"),
            (#"{"sinks": [{"kind": "batch", "config": {"batchSize": 2.5}}]}"#,
             "sinks[0].config.batchSize", "2.5 is not a whole number (records, 1 to 100000)"),
            (#"{"sinks": [{"kind": "batch", "queue": {"capacity": 0}}]}"#,
             "sinks[0].queue.capacity", "0 is below the smallest accepted value 1 (records)"),
            (#"{"shutdownTimeoutSeconds": 0.01}"#,
             "shutdownTimeoutSeconds", "0.01 is below the smallest accepted value 0.1 (seconds)"),
            (#"{"bluetooth": {"connections": 21}}"#,
             "bluetooth.connections", "21 is above the largest accepted value 20 (links)"),
            (#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1, "devices": [{"address": "x"}]}}], "#
                + #""sinks": [{"kind": "batch", "config": {"batchSize": 1000000}}]}"#,
             "sinks[0].config.batchSize", "1000000 is above the largest accepted value 100000 (records)"),
        ]
        for (json, keyPath, reason) in rows {
            let error = refusal(json)
            XCTAssertEqual(error?.keyPath, keyPath, json)
            XCTAssertEqual(error?.reason, reason, json)
            XCTAssertEqual(error?.file, "/etc/hg.json", json)
        }
    }

    func testTheCatalogChecksRangesOfAConfigurationBuiltInCode() {
        // No file schema: the plugin's own declaration still refuses the number.
        let configuration = GatewayConfiguration(
            sources: [PluginConfiguration(kind: "tick", config: ["device": "a", "interval": 1e-300])])
        XCTAssertThrowsError(try catalog.validate(configuration) { name in
            TestEnvironment.make(name: name, directory: URL(fileURLWithPath: "/nonexistent-healthgate-test"))
        }) { error in
            XCTAssertEqual((error as? ConfigurationError)?.keyPath, "sources[0].config.interval")
            XCTAssertEqual(
                (error as? ConfigurationError)?.reason, "1e-300 is below the smallest accepted value 0.001 (seconds)")
        }
    }

    func testValuesOfAnotherShapeAndUnknownKindsAreReportedWithTheRest() {
        // A string where a number is declared, and an unknown kind: found before decoding, so
        // that they join the file's other mistakes.
        XCTAssertEqual(
            refusal(#"{"sinks": [{"kind": "batch", "config": {"batchSize": "ten"}}]}"#)?.reason,
            "expected a whole number (records, 1 to 100000), got the string \"ten\"")
        XCTAssertEqual(
            refusal(#"{"sinks": [{"kind": "batch", "config": {"batchSize": "10"}}]}"#)?.reason,
            "expected a whole number (records, 1 to 100000), got the string \"10\"; write the number without quotes: 10")
        XCTAssertEqual(refusal(#"{"sinks": [{"kind": "batchy"}]}"#)?.reason, #"unknown kind "batchy"; did you mean "batch"? (known here: batch)"#)
        XCTAssertNil(refusal(#"{"sinks": [{"kind": "batch", "config": {"batchSize": 100000}}]}"#))
    }

    func testTheJSONSchemaCarriesEveryDeclaration() throws {
        let document = fileSchema.jsonSchemaDocument(title: "test")
        XCTAssertEqual(document["$schema"], "https://json-schema.org/draft/2020-12/schema")
        XCTAssertEqual(document["additionalProperties"], false)
        guard case .object(let properties)? = document["properties"],
            case .array(let sinks)? = properties["sinks"]?["items"]?["oneOf"],
            case .array(let sources)? = properties["sources"]?["items"]?["oneOf"]
        else { return XCTFail("no plugin alternatives in \(document)") }
        XCTAssertEqual(sources.count, 2)
        XCTAssertEqual(sinks.count, 1)
        let batch = sinks[0]
        XCTAssertEqual(batch["properties"]?["kind"]?["const"], "batch")
        XCTAssertEqual(batch["required"], ["kind"])
        XCTAssertEqual(batch["additionalProperties"], false)
        let batchSize = batch["properties"]?["config"]?["properties"]?["batchSize"]
        XCTAssertEqual(batchSize?["type"], "integer")
        XCTAssertEqual(batchSize?["minimum"], 1)
        XCTAssertEqual(batchSize?["maximum"], 100_000)
        XCTAssertEqual(batchSize?["default"], 100)
        XCTAssertEqual(batchSize?["x-unit"], "records")
        XCTAssertEqual(batchSize?["description"], "per batch (records, 1 to 100000)")
        XCTAssertEqual(batch["properties"]?["queue"]?["properties"]?["policy"]?["enum"], ["block", "dropOldest"])
        let tick = sources.first { $0["properties"]?["kind"]?["const"] == "tick" }
        XCTAssertEqual(tick?["properties"]?["config"]?["required"], ["device", "interval"])
        XCTAssertEqual(tick?["properties"]?["config"]?["properties"]?["interval"]?["type"], "number")
    }

    func testNumberRuleWordsEveryRefusal() {
        let rule = NumberRule(range: 0.01...100, unit: "notifications per second", whole: false)
        XCTAssertNil(rule.problem(with: 0.01))
        XCTAssertNil(rule.problem(with: 100))
        XCTAssertEqual(rule.problem(with: -0.0), "0 is below the smallest accepted value 0.01 (notifications per second)")
        XCTAssertEqual(rule.problem(with: .infinity), "a number beyond ±1.8e308 is outside the accepted values 0.01 to 100 (notifications per second)")
        let rates = NumberRule(range: 50...115_200, unit: "bits per second", whole: true, values: [50, 9600, 115_200])
        XCTAssertEqual(rates.problem(with: 9601), "9601 is not one of the accepted values (bits per second): 50, 9600, 115200")
        XCTAssertNil(rates.problem(with: 9600))
    }
}

import GatewayRuntime
import SampleBus
import XCTest

/// The gateway's own keys are declared once (``GatewayConfiguration/configurationKeys``): the
/// decoder, the file's schema and the configuration JSON `config init` writes all follow them.
final class DeclaredGatewayConfigurationTests: XCTestCase {
    private let catalog = PluginCatalog([.source(TickSource.self), .sink(BatchSink.self)])

    private var fileSchema: ConfigurationObject? {
        let schema = GatewayConfiguration.schema(
            catalog: catalog,
            sections: GatewayConfiguration.OwnedSections(
                store: .object([]), web: .object([]), profile: .object([]), participants: .array(.text), bluetooth: .object([])))
        guard case .object(let object) = schema else { return nil }
        return object
    }

    func testTheFileSchemaListsEveryDeclaredKeyInOrderAndGivesEachDelegatedOneItsOwnersShape() throws {
        let object = try XCTUnwrap(fileSchema)
        XCTAssertEqual(object.properties.map(\.name), GatewayConfiguration.configurationKeys.map(\.name))
        for property in object.properties {
            if case .delegated = property.schema { XCTFail("\(property.name) kept no owner's shape") }
        }
        guard case .array(.oneOf(let sinks), _, _)? = object.property("sinks")?.schema,
            case .object(let batch)? = sinks.first
        else { return XCTFail("no sink alternatives") }
        XCTAssertEqual(batch.properties.map(\.name), ["kind", "name", "queue", "config"])
        XCTAssertEqual(batch.required, ["kind"])
        guard case .array(.oneOf(let sources), _, _)? = object.property("sources")?.schema,
            case .object(let tick)? = sources.first
        else { return XCTFail("no source alternatives") }
        XCTAssertEqual(tick.properties.map(\.name), ["kind", "name", "config"], "a source has no queue")
    }

    func testTheConfigurationJSONIsTheFileThatDecodesBackToIt() throws {
        let configuration = GatewayConfiguration(
            sources: [PluginConfiguration(kind: "tick", name: "t", config: ["device": "a", "interval": 1])],
            sinks: [PluginConfiguration(kind: "batch", queue: QueueConfiguration(capacity: 5, policy: .dropOldest))],
            shutdownTimeoutSeconds: 3, profile: ["maximumHeartRate": 190], clock: ClockConfiguration(trusted: true))
        let json = configuration.configurationJSON
        guard case .array(let sinks)? = json["sinks"] else { return XCTFail("no sinks in \(json)") }
        XCTAssertEqual(sinks.first?["kind"], "batch", "a required key is written")
        XCTAssertNil(json["controlSocket"], "an absent optional key is left out")
        XCTAssertEqual(try json.decodeStrictly(GatewayConfiguration.self), configuration)
    }

    func testADelegatedShapeIsAnyValueForTheJSONSchema() {
        XCTAssertEqual(ConfigurationSchema.delegated.jsonSchema(), [:])
    }
}

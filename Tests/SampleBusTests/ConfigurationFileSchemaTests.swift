import Foundation
import GatewayRuntime
import SampleBus
import Synchronization
import XCTest

/// Loading a file builds only the parts of the whole file's schema the file uses (the `config`
/// of the kinds it names, the sections it has), and reports exactly what the whole schema
/// reports: the same key paths, the same reasons, the same further errors.
final class ConfigurationFileSchemaTests: XCTestCase {
    private let catalog = PluginCatalog([.source(TickSource.self), .sink(BatchSink.self), .source(BrokenSource.self)])

    /// Counts the sections' schemas built, by name.
    private final class SectionLog: Sendable {
        let built = Mutex<[String]>([])

        func schema(_ name: String, _ schema: ConfigurationSchema) -> ConfigurationSchema {
            built.withLock { $0.append(name) }
            return schema
        }
    }

    private func fileSchema(_ log: SectionLog = SectionLog()) -> ConfigurationFileSchema {
        ConfigurationFileSchema(
            catalog: catalog,
            sections: GatewayConfiguration.OwnedSections(
                store: log.schema("store", .object([ConfigurationProperty("path", .nonEmptyText, "The file")])),
                web: log.schema("web", .object([ConfigurationProperty("port", .whole(1...65535, unit: "port"), "The port")])),
                profile: log.schema("profile", .object([])), participants: log.schema("participants", .array(.text)),
                bluetooth: log.schema(
                    "bluetooth", .object([ConfigurationProperty("connections", .whole(1...20, unit: "links"), "A limit")]))))
    }

    private func parsed(_ json: String) throws -> JSONValue {
        try ConfigurationJSONParser.parse(Data(json.utf8))
    }

    func testOnlyTheNamedKindsAndThePresentSectionsAreBuilt() throws {
        let log = SectionLog()
        let file = try parsed(#"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1}}], "bluetooth": {}}"#)
        let document = fileSchema(log).parts(usedBy: file).jsonSchema()
        XCTAssertEqual(log.built.withLock { $0 }, ["bluetooth"])

        guard case .array(let sources)? = document["properties"]?["sources"]?["items"]?["oneOf"] else {
            return XCTFail("no source alternatives in \(document)")
        }
        func config(_ alternatives: [JSONValue], _ kind: String) -> JSONValue? {
            alternatives.first { $0["properties"]?["kind"]?["const"] == .string(kind) }?["properties"]?["config"]
        }
        // Every kind keeps its alternative (an unknown kind is still told from the known ones);
        // only the named one carries its declared keys.
        XCTAssertEqual(config(sources, "tick")?["required"], ["device", "interval"])
        XCTAssertEqual(config(sources, "broken")?["properties"], nil)
        XCTAssertNotNil(config(sources, "broken"))
        // Keys the file does not have stay delegated: any value, never looked at.
        XCTAssertEqual(document["properties"]?["sinks"]?["items"], nil)
        XCTAssertEqual(document["properties"]?["bluetooth"]?["properties"]?["connections"]?["maximum"], 20)
        XCTAssertEqual(document["properties"]?["web"]?["properties"], nil)

        let whole = fileSchema(log).whole.jsonSchema()
        XCTAssertEqual(Set(log.built.withLock { $0 }), ["store", "web", "profile", "participants", "bluetooth"])
        guard case .array(let allSinks)? = whole["properties"]?["sinks"]?["items"]?["oneOf"] else {
            return XCTFail("no sink alternatives in \(whole)")
        }
        XCTAssertEqual(config(allSinks, "batch")?["properties"]?["batchSize"]?["maximum"], 100_000)
    }

    func testAFileIsCheckedAsTheWholeSchemaChecksIt() throws {
        let files = [
            #"{}"#,
            #"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1}}], "sinks": [{"kind": "batch"}]}"#,
            #"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1e-300}}], "web": {"port": 0}}"#,
            #"{"sources": [{"kind": "tik", "config": {}}], "sinks": [{"kind": "batch", "config": {"batchSize": "ten"}}]}"#,
            #"{"sources": [{"kind": "batch"}], "sinks": [{"kind": "tick"}]}"#,
            #"{"sources": [{"kind": "tick", "config": {"device": "a", "interval": 1, "intervall": 2}}]}"#,
            #"{"sotres": {}, "stor": 5, "bluetooth": {"connections": 21}, "web": {"prot": 80}}"#,
            #"{"sinks": [{"kind": "batch", "queue": {"capacity": 0}, "config": {"batchSize": 1}}, 7]}"#,
            #"{"sources": {"kind": "tick"}, "sinks": [{"name": "no kind"}]}"#,
        ]
        let schema = fileSchema()
        for json in files {
            let whole = Result { () throws(ConfigurationError) in
                try GatewayConfiguration.parse(Data(json.utf8), origin: "/etc/hg.json", schema: schema.whole)
            }
            let parts = Result { () throws(ConfigurationError) in
                try GatewayConfiguration.parse(Data(json.utf8), origin: "/etc/hg.json", fileSchema: schema)
            }
            switch (whole, parts) {
            case (.success(let expected), .success(let configuration)):
                XCTAssertEqual(configuration, expected, json)
            case (.failure(let expected), .failure(let error)):
                // The description lists the further errors too.
                XCTAssertEqual(error.description, expected.description, json)
            default:
                XCTFail("\(json): the whole schema gives \(whole), the parts \(parts)")
            }
        }
        // The rows above cover both outcomes, and the problems found before decoding.
        XCTAssertNoThrow(try GatewayConfiguration.parse(Data(files[1].utf8), origin: "/etc/hg.json", fileSchema: schema))
        XCTAssertThrowsError(try GatewayConfiguration.parse(Data(files[6].utf8), origin: "/etc/hg.json", fileSchema: schema)) {
            XCTAssertEqual(($0 as? ConfigurationError)?.further.count, 3, "\($0)")
        }
    }
}

import Foundation
import GatewayTesting
import XCTest

/// Every configuration the user's documentation shows (the fenced `json` blocks of README.md and
/// docs/*.md) passes `healthgate config check`, as a user would paste it.
///
/// A block is checked when it is one plugin entry (`{"kind": …, "config": …}` of a kind
/// `healthgate plugins` lists), wrapped into `sources` or `sinks`, or when it is a whole
/// configuration (an object with a top-level key of `healthgate config schema`). Any other
/// block must be listed in ``excluded`` with the reason; an exclusion that matches no block fails.
/// Files a block names (`caFile`, `passwordFile`, `tokenFile`…) are pointed at readable files in
/// the test's private root, since `config check` requires them to be readable.
final class DocumentationConfigurationTests: XCTestCase {
    /// Blocks that are not configurations: the file, a text the block contains, and why.
    static let excluded: [(file: String, contains: String, reason: String)] = [
        ("docs/data-model.md", #""uuid": "019a...-7...""#,
         "a sample in healthgate's JSON (the data model), not a configuration; its uuid is elided"),
        ("docs/data-model.md", #"{"kind": "quantitySeries","#,
         "a quantity series in healthgate's JSON (the data model), not a configuration; its uuid and quantities are elided"),
    ]

    /// Keys whose values are files `config check` must be able to read.
    static let fileKeys = ["caFile", "certFile", "keyFile", "passwordFile", "tokenFile"]

    struct Block {
        var file: String
        var line: Int
        var text: String
    }

    func testEveryConfigurationInTheDocumentationPassesConfigCheck() async throws {
        let healthgate = try HealthgateExecutable()
        let root = HealthgateExecutable.packageRoot()
        let topLevelKeys = try await Self.topLevelKeys(healthgate)
        let roles = try await Self.pluginRoles(healthgate)
        XCTAssertTrue(topLevelKeys.contains("sources"), "config schema lists no sources: \(topLevelKeys)")
        XCTAssertEqual(roles["sqlite"], "sinks", "healthgate plugins: \(roles)")

        var checked = 0
        var usedExclusions = Set<Int>()
        for (number, block) in try Self.blocks(root: root).enumerated() {
            let place = "\(block.file):\(block.line)"
            if let exclusion = Self.excluded.firstIndex(where: { block.file == $0.file && block.text.contains($0.contains) }) {
                usedExclusions.insert(exclusion)
                continue
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(block.text.utf8)) as? [String: Any],
                !object.isEmpty
            else {
                XCTFail("\(place): not a JSON object; fix it, or exclude it with a reason:\n\(block.text)")
                continue
            }
            let document: String
            if let kind = object["kind"] as? String, let section = roles[kind] {
                document = #"{"\#(section)": [\#(block.text)]}"#
            } else if !Set(object.keys).isDisjoint(with: topLevelKeys) {
                // A whole configuration; a misspelt key among the others is config check's to report.
                document = block.text
            } else {
                XCTFail(
                    "\(place): neither a whole configuration nor a plugin entry (keys \(object.keys.sorted())); "
                        + "fix it, or exclude it with a reason:\n\(block.text)")
                continue
            }
            let file = healthgate.root.appendingPathComponent("documentation-\(number).json")
            try Data(try Self.retargetingFiles(document, into: healthgate.root).utf8).write(to: file)
            let result = try await healthgate.run(["config", "check", file.path])
            XCTAssertEqual(result.status, 0, "\(place): config check refuses it: \(result.standardError)\n\(block.text)")
            checked += 1
        }
        for (index, exclusion) in Self.excluded.enumerated() where !usedExclusions.contains(index) {
            XCTFail("the exclusion of \(exclusion.file) (\(exclusion.contains)) matches no block: remove it")
        }
        // README.md and docs/ show about ten configurations; fewer means the blocks were not found.
        XCTAssertGreaterThanOrEqual(checked, 8, "configurations checked")
    }

    /// The fenced `json` blocks of README.md and docs/*.md, with the line of their opening fence.
    static func blocks(root: URL) throws -> [Block] {
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        var blocks: [Block] = []
        for name in ["README.md"] + names {
            let lines = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            var opening: Int?
            var body: [Substring] = []
            for (index, line) in lines.enumerated() {
                if let start = opening {
                    if line.hasPrefix("```") {
                        blocks.append(Block(file: name, line: start + 1, text: body.joined(separator: "\n")))
                        opening = nil
                    } else {
                        body.append(line)
                    }
                } else if line == "```json" {
                    opening = index
                    body = []
                }
            }
        }
        return blocks
    }

    /// The top-level keys of the configuration, from `healthgate config schema`.
    static func topLevelKeys(_ healthgate: HealthgateExecutable) async throws -> Set<String> {
        let result = try await healthgate.run(["config", "schema"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let schema = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let properties = schema?["properties"] as? [String: Any] ?? [:]
        return Set(properties.keys)
    }

    /// Each compiled-in plugin kind and the section its entries go in (`sources` or `sinks`),
    /// from the KIND and ROLE columns of `healthgate plugins`.
    static func pluginRoles(_ healthgate: HealthgateExecutable) async throws -> [String: String] {
        let result = try await healthgate.run(["plugins"])
        XCTAssertEqual(result.status, 0, result.standardError)
        var roles: [String: String] = [:]
        for line in result.standardOutput.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 2 else { continue }
            roles[String(columns[0])] = "\(columns[1])s"
        }
        return roles
    }

    /// `document` with every file a ``fileKeys`` key names replaced by a readable file below
    /// `directory` (a token long enough for `tokenFile`).
    static func retargetingFiles(_ document: String, into directory: URL) throws -> String {
        let pattern = try NSRegularExpression(pattern: #""(\#(fileKeys.joined(separator: "|")))"(\s*:\s*)"([^"]*)""#)
        let text = NSString(string: document)
        let result = NSMutableString(string: document)
        // From the last match back, so that the ranges of the earlier ones stay valid.
        for match in pattern.matches(in: document, range: NSRange(location: 0, length: text.length)).reversed() {
            let file = directory.appendingPathComponent("referenced").appendingPathComponent(
                text.substring(with: match.range(at: 3)).trimmingCharacters(in: CharacterSet(charactersIn: "/")))
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("documentation-test-token-0123456789\n".utf8).write(to: file)
            let key = text.substring(with: match.range(at: 1)), separator = text.substring(with: match.range(at: 2))
            result.replaceCharacters(in: match.range, with: #""\#(key)"\#(separator)"\#(file.path)""#)
        }
        return String(result)
    }
}

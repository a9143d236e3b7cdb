public import Foundation
public import GATTDecoding

/// A fixture file of a GATT plugin's `Fixtures/`: payloads published by independent projects, each
/// with its source cited, the values a decoder must produce for the valid ones and the typed error
/// it must throw for the malformed ones. `Expected` is the shape a plugin compares values in.
public struct GATTFixtureFile<Expected: Decodable>: Decodable {
    /// Where a payload was published: a repository, a file in it and, where the plugin records it,
    /// the test that uses it.
    public struct Source: Decodable {
        public var repository: String
        public var path: String
        public var test: String?
    }

    public struct Valid: Decodable {
        public var name: String
        public var source: Source
        public var hex: String
        public var expected: Expected
        /// Values a plugin derives beyond the decoded fields (its mapper's view), where it has any.
        public var extra: Expected?

        public var bytes: [UInt8] { hexBytes(hex) }
    }

    public struct Invalid: Decodable {
        public var name: String
        public var source: Source
        public var hex: String
        public var error: ExpectedError

        public var bytes: [UInt8] { hexBytes(hex) }
    }

    /// The parts of a ``CharacteristicDecodingError`` a fixture pins down.
    public struct ExpectedError: Decodable, Equatable, CustomStringConvertible {
        public var code: String
        public var field: String
        public var offset: Int
        public var needed: Int
        public var available: Int

        public init<C>(_ error: CharacteristicDecodingError<C>) {
            code = error.code.rawValue
            field = error.field
            offset = error.offset
            needed = error.needed
            available = error.available
        }

        public var description: String {
            "\(code) at \(field), offset \(offset), needed \(needed), available \(available)"
        }
    }

    /// Why a fixture file is unusable: a test that loads it fails with this rather than passing
    /// over an empty or uncited file.
    public struct Problem: Error, CustomStringConvertible {
        public var file: String
        public var reason: String
        public var description: String { "\(file): \(reason)" }
    }

    /// The characteristic the file is about, where the plugin names it.
    public var characteristic: String?
    public var valid: [Valid]
    public var invalid: [Invalid]

    /// Reads `name` from `directory`; a file without valid payloads, or with a payload whose source
    /// is not cited, is a ``Problem``.
    public static func load(_ name: String, from directory: URL) throws -> Self {
        let file = try JSONDecoder().decode(Self.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
        guard !file.valid.isEmpty else { throw Problem(file: name, reason: "no valid payloads") }
        let sources = file.valid.map { ($0.name, $0.source) } + file.invalid.map { ($0.name, $0.source) }
        for (fixture, source) in sources where source.repository.isEmpty || source.path.isEmpty {
            throw Problem(file: name, reason: "\(fixture) does not cite its source")
        }
        return file
    }
}

/// The bytes of hex digits as fixtures write them, spaces allowed.
public func hexBytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd hex: \(hex)")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// The `Fixtures/` folder beside the test folder holding `testFile` (pass `#filePath`).
public func fixturesDirectory(besideTestsOf testFile: String) -> URL {
    URL(fileURLWithPath: testFile).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
}

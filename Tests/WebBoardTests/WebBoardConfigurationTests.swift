import SampleBus
import Foundation
import GatewayTesting
import GatewayRuntime
import WebBoard
import XCTest

/// The `web` key: strict decoding, the listen address, loopback without a token, and the token
/// file.
final class WebBoardConfigurationTests: XCTestCase {
    func keyPath(_ value: JSONValue) -> String? {
        do {
            _ = try WebBoardConfiguration.decode(value, origin: "config.json")
            return nil
        } catch {
            return error.keyPath
        }
    }

    func testAbsentMeansOffAndLoopbackNeedsNoToken() throws {
        XCTAssertNil(try WebBoardConfiguration.decode(nil, origin: "config.json"))
        let board = try XCTUnwrap(try WebBoardConfiguration.decode(.object(["listen": .string("127.0.0.1:8080")]), origin: "c"))
        XCTAssertEqual(board.listen.octets, [127, 0, 0, 1])
        XCTAssertEqual(board.listen.port, 8080)
        XCTAssertTrue(board.listen.isLoopback)
        XCTAssertTrue(try ListenAddress(parsing: "localhost:0").isLoopback)
        XCTAssertTrue(try ListenAddress(parsing: "127.0.0.2:80").isLoopback)
        XCTAssertFalse(try ListenAddress(parsing: "0.0.0.0:80").isLoopback)
        XCTAssertNil(try board.token(origin: "c"))
    }

    func testMistakesNameTheirKey() {
        XCTAssertEqual(keyPath(.object(["listen": .string("127.0.0.1:8080"), "tokenfile": .string("x")])), "web.tokenfile")
        XCTAssertEqual(keyPath(.object([:])), "web.listen")
        XCTAssertEqual(keyPath(.object(["listen": .string("127.0.0.1")])), "web.listen")
        XCTAssertEqual(keyPath(.object(["listen": .string("127.0.0.1:99999")])), "web.listen")
        XCTAssertEqual(keyPath(.object(["listen": .string("example.org:80")])), "web.listen")
        XCTAssertEqual(keyPath(.object(["listen": .string("0.0.0.0:8080")])), "web.listen", "not loopback: needs a token")
    }

    func testATokenFileGuardsAnyAddress() throws {
        let directory = try TestEnvironment.temporaryDirectory("web-token")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token")
        try Data("  s3cret-token-0123456789  \nignored\n".utf8).write(to: file)
        let board = try XCTUnwrap(try WebBoardConfiguration.decode(
            .object(["listen": .string("0.0.0.0:8080"), "tokenFile": .string(file.path)]), origin: "c"))
        XCTAssertEqual(try board.token(origin: "c"), "s3cret-token-0123456789")

        try Data("short\n".utf8).write(to: file)
        XCTAssertEqual(keyPath(.object(["listen": .string("127.0.0.1:1"), "tokenFile": .string(file.path)])), "web.tokenFile")
        XCTAssertEqual(
            keyPath(.object(["listen": .string("127.0.0.1:1"), "tokenFile": .string(directory.appendingPathComponent("none").path)])),
            "web.tokenFile")
    }
}

import Foundation
import GatewayRuntime
@testable import WebBoard
import XCTest

/// The board's sign-in is accepted only from its own page on its own address, with a body of
/// exactly the form's keys; every refusal says what was wrong.
final class BoardSignInRequestTests: XCTestCase {
    let loopback = try! ListenAddress(parsing: "127.0.0.1:8080")

    func refusal(_ headers: BoardSignInRequest.Headers, listen: ListenAddress? = nil, port: UInt16 = 8080) -> BoardSignInRequest.Refusal? {
        do {
            try BoardSignInRequest.checkHeaders(headers, listen: listen ?? loopback, port: port)
            return nil
        } catch {
            return error
        }
    }

    func testOnlyTheBoardsOwnOriginOnItsOwnAddressMaySignIn() throws {
        let json = "application/json; charset=utf-8"
        XCTAssertNil(refusal(.init(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080", contentType: json)))
        XCTAssertNil(refusal(.init(host: "localhost:8080", origin: "http://localhost:8080", contentType: "application/json")))
        XCTAssertEqual(refusal(.init(host: nil, origin: "http://127.0.0.1:8080", contentType: json))?.status, 403)
        // DNS rebinding: a name that resolves here is not the board's address.
        let rebound = refusal(.init(host: "evil.example:8080", origin: "http://evil.example:8080", contentType: json))
        XCTAssertEqual(rebound?.status, 403)
        XCTAssertTrue(rebound?.message.contains("Host evil.example:8080 is not the board's address") ?? false, "\(String(describing: rebound))")
        XCTAssertEqual(refusal(.init(host: "127.0.0.1:9090", origin: "http://127.0.0.1:9090", contentType: json))?.status, 403, "another port")
        // Cross-site request forgery: another origin, or none.
        let foreign = refusal(.init(host: "127.0.0.1:8080", origin: "http://evil.example", contentType: json))
        XCTAssertEqual(foreign, .init(status: 403, message: "sign-in refused: Origin http://evil.example is not the board's (http://127.0.0.1:8080)"))
        XCTAssertEqual(refusal(.init(host: "127.0.0.1:8080", origin: nil, contentType: json))?.status, 403)
        // A form on another site cannot send JSON without a preflight.
        XCTAssertEqual(refusal(.init(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080", contentType: "text/plain"))?.status, 415)
        XCTAssertEqual(refusal(.init(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080", contentType: nil))?.status, 415)

        // Listening on every address (with a token): any IPv4 literal, never a name.
        let any = try ListenAddress(parsing: "0.0.0.0:8080")
        XCTAssertNil(refusal(.init(host: "192.168.1.20:8080", origin: "http://192.168.1.20:8080", contentType: json), listen: any))
        XCTAssertEqual(refusal(.init(host: "gym.local:8080", origin: "http://gym.local:8080", contentType: json), listen: any)?.status, 403)
        // A LAN address: that address only; localhost is not it.
        let lan = try ListenAddress(parsing: "192.168.1.20:8080")
        XCTAssertEqual(refusal(.init(host: "localhost:8080", origin: "http://localhost:8080", contentType: json), listen: lan)?.status, 403)
    }

    func decode(_ text: String) -> Result<BoardSignInRequest, BoardSignInRequest.Refusal> {
        do {
            return .success(try BoardSignInRequest.decode(Array(text.utf8)))
        } catch {
            return .failure(error)
        }
    }

    func message(_ text: String) -> String? {
        if case .failure(let refusal) = decode(text) { return refusal.message }
        return nil
    }

    func testTheBodyIsExactlyTheFormsKeys() {
        XCTAssertEqual(
            try decode(#"{"strap": " 02:00:00:00:00:03 ", "participant": "Cleo"}"#).get(),
            BoardSignInRequest(strap: "02:00:00:00:00:03", participant: "Cleo", keep: false))
        XCTAssertEqual(try decode(#"{"strap": "ant:120:7", "participant": "Dan", "keep": true}"#).get().keep, true)
        XCTAssertTrue(message("strap=x")?.hasPrefix("sign-in refused: the body is not JSON") ?? false)
        XCTAssertEqual(message("[]"), "sign-in refused: the body must be a JSON object with strap and participant")
        XCTAssertEqual(message(#"{"strap": "x"}"#), "sign-in refused: participant is missing (a participant's or a new member's name)")
        XCTAssertEqual(message(#"{"strap": "x", "participant": "y", "admin": true}"#), #"sign-in refused: unknown key "admin" (strap, participant, keep)"#)
        XCTAssertEqual(message(#"{"strap": 7, "participant": "y"}"#), "sign-in refused: strap must be a string")
        XCTAssertEqual(message(#"{"strap": "x", "participant": "   "}"#), "sign-in refused: participant must be 1 to 64 characters")
        XCTAssertEqual(
            message(#"{"strap": "x", "participant": "\#(String(repeating: "a", count: 65))"}"#), "sign-in refused: participant must be 1 to 64 characters")
        XCTAssertEqual(message(#"{"strap": "x", "participant": "a\u0007b"}"#), "sign-in refused: participant must not contain control characters")
        XCTAssertEqual(message(#"{"strap": "x", "participant": "y", "keep": "yes"}"#), "sign-in refused: keep must be true or false")
        if case .failure(let refusal) = decode(String(repeating: " ", count: 5000)) { XCTAssertEqual(refusal.status, 413) } else { XCTFail("too large") }
    }
}

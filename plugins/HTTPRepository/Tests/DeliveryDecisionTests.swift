import Foundation
import HTTPRepository
import RemoteSinkKit
import XCTest

/// The delivery's decisions, outcome in and decision out, without a server.
final class DeliveryDecisionTests: XCTestCase {
    let policy = DeliveryPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(8), jitter: 0.2)
    let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    func decide(_ response: HTTPResponse, count: Int = 10, attempt: Int = 1, stopping: Bool = false) -> DeliveryDecision {
        policy.decision(for: policy.outcome(of: response, now: now), batchCount: count, attempt: attempt, stopping: stopping, random: 0.5)
    }

    func testTwoHundredsAcknowledge() {
        for status in [200, 201, 202, 204, 299] {
            XCTAssertEqual(decide(HTTPResponse(status: status)), .acknowledge, "\(status)")
        }
    }

    func testRetryableStatusesBackOffAndHonourRetryAfter() {
        for status in [408, 429, 500, 502, 503, 504] {
            XCTAssertEqual(
                decide(HTTPResponse(status: status), attempt: 3),
                .retry(after: .seconds(2), reason: "HTTP \(status)", fromServer: false), "\(status)")
            XCTAssertEqual(
                decide(HTTPResponse(status: status, headers: ["retry-after": "7"])),
                .retry(after: .seconds(7), reason: "HTTP \(status)", fromServer: true), "\(status)")
        }
        XCTAssertEqual(
            decide(HTTPResponse(status: 503, headers: ["retry-after": "Sun, 06 Nov 1994 08:49:47 GMT"])),
            .retry(after: .seconds(10), reason: "HTTP 503", fromServer: true))
        XCTAssertEqual(
            decide(HTTPResponse(status: 429, headers: ["retry-after": "999999"])),
            .retry(after: .seconds(3600), reason: "HTTP 429", fromServer: true), "a Retry-After beyond an hour is clamped")
        XCTAssertEqual(decide(HTTPResponse(status: 503), attempt: 30), .retry(after: .seconds(8), reason: "HTTP 503", fromServer: false))
    }

    func testPoisonBatchIsBisectedDownToOneRecordThenDeadLettered() {
        let refusal = HTTPResponse(status: 422, body: Data(#"{"error":"bad"}"#.utf8))
        XCTAssertEqual(decide(refusal, count: 500), .bisect(status: 422, answer: #"{"error":"bad"}"#))
        XCTAssertEqual(decide(refusal, count: 2), .bisect(status: 422, answer: #"{"error":"bad"}"#))
        XCTAssertEqual(decide(refusal, count: 1), .deadLetter(status: 422, answer: #"{"error":"bad"}"#))
        XCTAssertEqual(decide(HTTPResponse(status: 400), count: 1, stopping: true), .deadLetter(status: 400, answer: ""),
                       "a refusal is final even while stopping")
    }

    func testAuthenticationFailuresKeepTheBatch() {
        XCTAssertEqual(decide(HTTPResponse(status: 401), count: 1), .reauthenticate(after: .milliseconds(500), status: 401))
        XCTAssertEqual(decide(HTTPResponse(status: 403), attempt: 2), .reauthenticate(after: .seconds(1), status: 403))
    }

    func testTransportAndTLSErrorsAreRetried() {
        let refused = HTTPTransportError(url: "http://127.0.0.1:9/x", reason: "Failed to connect to 127.0.0.1 port 9: Connection refused")
        let tls = HTTPTransportError(url: "https://127.0.0.1:9/x", reason: "SSL certificate problem: unable to get local issuer certificate")
        let timeout = HTTPTransportError(url: "http://127.0.0.1:9/x", reason: "Operation timed out", isTimeout: true)
        for error in [refused, tls, timeout] {
            XCTAssertEqual(
                policy.decision(for: DeliveryPolicy.outcome(of: error), batchCount: 10, attempt: 2, stopping: false, random: 0.5),
                .retry(after: .seconds(1), reason: error.description, fromServer: false))
        }
    }

    func testARedirectIsRetriedNotFollowed() {
        guard case .retry(_, let reason, false) = decide(HTTPResponse(status: 301, headers: ["location": "http://elsewhere/"])) else {
            return XCTFail("a redirect is not retried")
        }
        XCTAssertTrue(reason.contains("not followed"), reason)
    }

    func testAGracefulStopNeverWaits() {
        XCTAssertEqual(decide(HTTPResponse(status: 503, headers: ["retry-after": "7"]), stopping: true), .stop(reason: "HTTP 503", pause: .seconds(7)))
        XCTAssertEqual(decide(HTTPResponse(status: 401), stopping: true), .stop(reason: "authentication failed (401)"))
        let refused = HTTPTransportError(url: "http://127.0.0.1:9/x", reason: "refused")
        XCTAssertEqual(
            policy.decision(for: DeliveryPolicy.outcome(of: refused), batchCount: 1, attempt: 1, stopping: true, random: 0.5),
            .stop(reason: refused.description))
        XCTAssertEqual(decide(HTTPResponse(status: 200), stopping: true), .acknowledge)
    }
}

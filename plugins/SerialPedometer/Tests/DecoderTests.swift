import Foundation
import SerialPedometer
import XCTest

/// Reads a fixture next to the test sources (plugins/SerialPedometer/Fixtures).
func fixture(_ name: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(name)
    return Array(try Data(contentsOf: url))
}

/// A comparable summary of one decode outcome.
enum Outcome: Hashable, CustomStringConvertible {
    case id(String?)
    case steps(UInt32, Double?, Double?, Double?)
    case error(PedometerDecodeError.Code)

    init(_ result: Result<PedometerMessage, PedometerDecodeError>) {
        switch result {
        case .success(.identification(let identity)): self = .id(identity.serialNumber)
        case .success(.reading(let r)): self = .steps(r.steps, r.distanceMeters, r.cadence, r.deviceTime?.timeIntervalSince1970)
        case .failure(let error): self = .error(error.code)
        }
    }

    var description: String {
        switch self {
        case .id(let serial): "id(\(serial ?? "nil"))"
        case .steps(let s, let d, let c, let t): "steps(\(s), \(d.map { "\($0)" } ?? "nil"), \(c.map { "\($0)" } ?? "nil"), \(t.map { "\($0)" } ?? "nil"))"
        case .error(let code): "error(\(code.rawValue))"
        }
    }
}

final class DecoderTests: XCTestCase {
    /// What hgp1-session.bin decodes to (see the fixture's construction in the README).
    let expectedSession: [Outcome] = [
        .id("SN12345"),
        .steps(1000, 750, 110, 1_800_000_000),
        .steps(1002, nil, nil, nil),
        .steps(1010, nil, nil, nil),
        .error(.noise),
        .error(.checksum),
        .error(.overlong),
        .steps(1020, 765.5, nil, nil),
        .error(.unknownSentence),
        .error(.malformed),
        .steps(4_294_967_295, 1, 2, 3),
    ]

    /// NIO's decoder-verifier idea: every chunk size from 1 byte to the whole input gives the
    /// same messages.
    func testSessionFixtureInEveryChunking() throws {
        let bytes = try fixture("hgp1-session.bin")
        for size in 1...bytes.count {
            var decoder = PedometerStreamDecoder(HGPTextDecoder(maximumLineLength: 256))
            var outcomes: [Outcome] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + size)
                outcomes += decoder.feed(bytes[start..<end]).map(Outcome.init)
                start = end
            }
            XCTAssertEqual(outcomes, expectedSession, "chunk size \(size)")
        }
    }

    func testTypeErasedDecoderMatches() throws {
        let bytes = try fixture("hgp1-session.bin")
        var decoder = try XCTUnwrap(PedometerProtocols.decoder(named: "hgp1", maximumLineLength: 256))
        var outcomes: [Outcome] = []
        for byte in bytes { outcomes += decoder.feed([byte]).map(Outcome.init) }
        XCTAssertEqual(outcomes, expectedSession)
        XCTAssertEqual(decoder.identificationRequest, Array("ID?\r\n".utf8))
        XCTAssertNil(PedometerProtocols.decoder(named: "nope", maximumLineLength: 256))
    }

    func testChecksumIsXorBetweenDollarAndStar() throws {
        // "ST,5": 0x53 ^ 0x54 ^ 0x2C ^ 0x35 = 0x1E
        XCTAssertEqual(HGPTextDecoder.checksum("ST,5".utf8), 0x1E)
        XCTAssertEqual(HGPTextDecoder.sentence("ST,5"), "$ST,5*1E\r\n")
        let decoder = HGPTextDecoder()
        XCTAssertEqual(Outcome(Result { () throws(PedometerDecodeError) in try decoder.decode(frame: Array("$ST,5*1e".utf8)) }), .steps(5, nil, nil, nil))
        XCTAssertEqual(Outcome(Result { () throws(PedometerDecodeError) in try decoder.decode(frame: Array("$ST,5".utf8)) }), .steps(5, nil, nil, nil))
    }

    /// The example session in README.md decodes as documented.
    func testReadmeExampleSession() {
        var decoder = PedometerStreamDecoder(HGPTextDecoder())
        let lines = "$ID,Acme,StepPod 2,SN12345,1.4.2*47\r\n$ST,1000,750.0,110,1800000000*13\r\n$ST,1010,757.5,112,1800000005*17\r\n"
        XCTAssertEqual(decoder.feed(Array(lines.utf8)).map(Outcome.init), [
            .id("SN12345"), .steps(1000, 750, 110, 1_800_000_000), .steps(1010, 757.5, 112, 1_800_000_005),
        ])
    }

    func testMalformedFramesNameTheProblem() {
        let decoder = HGPTextDecoder()
        let cases: [(String, PedometerDecodeError.Code, String)] = [
            ("$ST,5*2F", .checksum, "does not match"),
            ("$ST,5*G1", .malformed, "two hex digits"),
            ("ST,5*2E", .malformed, "outside"),
            ("ST,4294967296", .malformed, "0…4294967295"),
            ("ST,-1", .malformed, "step count"),
            ("ST,", .malformed, "step count"),
            ("ST,1,2,3,4,5", .malformed, "1 to 4 fields"),
            ("ST,1,-2", .malformed, "distance"),
            ("ST,1,,nan", .malformed, "cadence"),
            ("ST,1,,,1e9", .malformed, "device time"),
            ("ID,a,b,c", .malformed, "4 fields"),
            ("ID,a,b,,d", .malformed, "empty serial"),
            ("BATT,90", .unknownSentence, "BATT"),
            ("ST,1\u{7}", .noise, "printable"),
        ]
        for (line, code, fragment) in cases {
            do {
                let message = try decoder.decode(frame: Array(line.utf8))
                XCTFail("\(line) decoded as \(message)")
            } catch {
                XCTAssertEqual(error.code, code, line)
                XCTAssertTrue(error.description.contains(fragment), "\(line): \(error)")
            }
        }
    }
}

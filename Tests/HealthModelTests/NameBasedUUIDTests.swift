import Foundation
@testable import HealthModel
import XCTest

/// SHA-1 against the published test vectors, and name-based (version 5) UUIDs against RFC 9562's
/// example: what derives a record's uuid from its sync identifier.
final class NameBasedUUIDTests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// FIPS 180-2, Appendix A (and RFC 3174, section 7.3): "abc", the 448-bit message, one
    /// million "a"; plus the empty message.
    func testSHA1PublishedVectors() {
        XCTAssertEqual(hex(SHA1.digest(Array("abc".utf8))), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(
            hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: 0x61, count: 1_000_000))), "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        XCTAssertEqual(hex(SHA1.digest([])), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        // 55 and 56 bytes, where the length no longer fits the first block (digests from Python's hashlib).
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: 0x61, count: 55))), "c1c8bbdc22796e28c0e15163d20899b65621d65a")
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: 0x61, count: 56))), "c2db330f6083854c99d4b5bfb6e8f29f201be699")
    }

    /// RFC 9562, Appendix A.4: "www.example.com" in the DNS namespace.
    func testVersion5ExampleOfRFC9562() throws {
        let dns = try XCTUnwrap(UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8"))
        XCTAssertEqual(UUID(nameBased: "www.example.com", in: dns).uuidString.lowercased(), "2ed6657d-e927-568b-95e1-2665a8aea6a2")
    }

    func testSyncIdentifierUUIDsAreStableAndVersioned() {
        let first = SampleID(syncIdentifier: "D0:00:00:00:00:07/bloodGlucose/7", version: 1)
        XCTAssertEqual(first, SampleID(syncIdentifier: "D0:00:00:00:00:07/bloodGlucose/7", version: 1))
        XCTAssertNotEqual(first, SampleID(syncIdentifier: "D0:00:00:00:00:07/bloodGlucose/7", version: 2), "a new version is a new object")
        XCTAssertNotEqual(first, SampleID(syncIdentifier: "D0:00:00:00:00:07/bloodGlucose/8", version: 1))
        let text = first.uuidString.uppercased()
        XCTAssertEqual(Array(text)[14], "5", "version 5")
        XCTAssertTrue("89AB".contains(Array(text)[19]), "the RFC variant")
    }
}

import BLEAdvertisementKit
import BLETransport
import Foundation
import HealthModel
import XCTest

/// The kit's pure parts: matching, identity by default, the rate meter and its verdict.
final class AdvertisementKitTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func advertisement(_ address: String = "A0:9E:1A:12:34:56", name: String? = nil, company: UInt16? = nil, service: UInt16? = nil)
        -> Advertisement
    {
        Advertisement(
            address: address, name: name, manufacturerData: company.map { [$0: [0x00]] } ?? [:],
            serviceData: service.map { [BluetoothUUID($0): [0x00]] } ?? [:], receivedAt: start)
    }

    func testMatches() {
        XCTAssertTrue(AdvertisementMatch.manufacturer(0x006B).matches(advertisement(company: 0x006B)))
        XCTAssertFalse(AdvertisementMatch.manufacturer(0x006B).matches(advertisement(company: 0x016B)))
        XCTAssertTrue(AdvertisementMatch.serviceData(BluetoothUUID(0x181D)).matches(advertisement(service: 0x181D)))
        XCTAssertFalse(AdvertisementMatch.serviceData(BluetoothUUID(0x181D)).matches(advertisement(service: 0x181B)))
        XCTAssertTrue(AdvertisementMatch.name("Polar *").matches(advertisement(name: "Polar H10 1A2B3C4D")))
        XCTAssertTrue(AdvertisementMatch.name("Polar H?? *").matches(advertisement(name: "Polar H10 1A2B3C4D")))
        XCTAssertFalse(AdvertisementMatch.name("Polar *").matches(advertisement(name: "polar H10")))
        XCTAssertFalse(AdvertisementMatch.name("Polar *").matches(advertisement()))
    }

    /// What each match becomes in an Advertisement Monitor: the AD type and the identifier
    /// little-endian (Core Specification Supplement, Part A, §1.4 and §1.11), a name glob's
    /// literal prefix, and nil where no pattern can say it.
    func testMonitorPatterns() throws {
        XCTAssertEqual(AdvertisementMatch.manufacturer(0x006B).dataPatterns, [AdvertisingDataPattern(type: 0xFF, content: [0x6B, 0x00])])
        XCTAssertEqual(
            AdvertisementMatch.serviceData(BluetoothUUID(0x181D)).dataPatterns, [AdvertisingDataPattern(type: 0x16, content: [0x1D, 0x18])])
        let uuid = try XCTUnwrap(BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
        XCTAssertEqual(
            AdvertisementMatch.serviceData(uuid).dataPatterns,
            [AdvertisingDataPattern(type: 0x21, content: [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E])])
        XCTAssertEqual(
            AdvertisementMatch.name("Polar H?? *").dataPatterns,
            [AdvertisingDataPattern(type: 0x09, content: Array("Polar H".utf8)), AdvertisingDataPattern(type: 0x08, content: Array("Polar H".utf8))])
        XCTAssertNil(AdvertisementMatch.name("*H10").dataPatterns)
        XCTAssertNil(AdvertisementMatch.name(String(repeating: "x", count: 30) + "*").dataPatterns)
    }

    /// A profile that keeps the kit's identity: the address.
    enum AddressedProfile: AdvertisementProfile {
        static let displayName = "addressed"
        static let matches: [AdvertisementMatch] = [.manufacturer(0x006B)]
        static let requiredRate: Double? = nil
        static func decode(_ advertisement: Advertisement) throws(Never) -> Int? { nil }
    }

    /// By default a device is its address, in ``DeviceIdentity``'s canonical form, so a
    /// participant's `devices` name it in any form; logs name a device by its identity, with the
    /// address when that is another.
    func testIdentityByDefaultIsTheAddress() {
        let heard = advertisement("a0:9e:1a:12:34:56")
        let identity = AddressedProfile.identity(of: heard)
        XCTAssertEqual(identity.canonical, "A0:9E:1A:12:34:56")
        XCTAssertEqual(identity, DeviceIdentity("a0-9e-1a-12-34-56"))
        XCTAssertEqual(heard.addressIdentity, identity)
        XCTAssertEqual(heard.naming(identity), "A0:9E:1A:12:34:56")
        XCTAssertEqual(heard.naming(DeviceIdentity("1a2b3c4d")), "1A2B3C4D (A0:9E:1A:12:34:56)")
    }

    func testRateOverTheWindow() {
        var meter = AdvertisementRateMeter(window: 10)
        XCTAssertNil(meter.rate(of: "strap", at: start))
        for i in 0..<21 { meter.record("strap", at: start.addingTimeInterval(Double(i) * 0.5)) }
        XCTAssertEqual(meter.rate(of: "strap", at: start.addingTimeInterval(10)) ?? 0, 2, accuracy: 0.001)
        // A device heard once every 4 s: what a duplicate filter leaves of a changing advertisement.
        for i in 0..<6 { meter.record("filtered", at: start.addingTimeInterval(Double(i) * 4)) }
        let slow = meter.rate(of: "filtered", at: start.addingTimeInterval(20))
        XCTAssertEqual(slow ?? 0, 0.25, accuracy: 0.001)
        XCTAssertEqual(RateVerdict.judge(measured: slow, required: 1), .insufficient(measured: 0.25, required: 1))
        XCTAssertEqual(RateVerdict.judge(measured: 0.9, required: 1), .sufficient)
        XCTAssertEqual(RateVerdict.judge(measured: nil, required: 1), .unknown)
        XCTAssertEqual(RateVerdict.judge(measured: nil, required: nil), .sufficient)
        XCTAssertEqual(meter.devices, ["filtered", "strap"])
    }

    func testMeterIsBounded() {
        var meter = AdvertisementRateMeter(window: 10, capacity: 8)
        for i in 0..<100 { meter.record("busy", at: start.addingTimeInterval(Double(i) * 0.01)) }
        // 8 arrivals kept, 0.01 s apart: the rate is still measured from what is kept.
        XCTAssertEqual(meter.rate(of: "busy", at: start.addingTimeInterval(1)) ?? 0, 100, accuracy: 0.5)
    }

    func testScanPaths() {
        XCTAssertTrue(ScanPath.advertisementMonitor.reportsEveryChange)
        XCTAssertFalse(ScanPath.discovery.reportsEveryChange)
        XCTAssertEqual(ScanPath.allCases.map(\.rawValue), ["advertisement-monitor", "discovery", "management-socket", "simulated"])
    }
}

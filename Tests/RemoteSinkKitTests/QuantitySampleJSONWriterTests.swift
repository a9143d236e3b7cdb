import Foundation
import HealthModel
import RemoteSinkKit
import XCTest

/// The hand-written HealthJSON writer must produce exactly the bytes `JSONEncoder` does, or
/// decline (nil) so that the encoder is used.
final class QuantitySampleJSONWriterTests: XCTestCase {
    let ids = SampleIDGenerator(seed: 11)

    func testQuantitySampleWriterIsByteIdenticalToHealthJSON() throws {
        let devices: [Device?] = [
            nil, Device(),
            Device(name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "5.0.0",
                   localIdentifier: "A0:9E:1A:12:34:56"),
            Device(name: "Foot pod", manufacturer: "Acme", model: "FP-1", hardwareVersion: "2", firmwareVersion: "1.2",
                   softwareVersion: "3.4/5", localIdentifier: "usb-Acme_FP1_0001", udiDeviceIdentifier: "(01)0061414199999",
                   radioIdentifier: "02:00:00:00:00:01"),
            Device(localIdentifier: "/dev/serial/by-id/usb-x"),
            Device(name: "Pölar ♥"), Device(name: "say \"hi\""), Device(name: "back\\slash"), Device(name: "tab\there"),
        ]
        let kinds: [(QuantityType, HealthUnit, [Double])] = [
            (.heartRate, .countPerMinute, [0, 1, 60, 72, 72.5, 199, 250.25, 1e15, 9_007_199_254_740_993]),
            (.stepCount, .count, [0, 3, 120, 65_535, 1e9]),
            (.distanceWalkingRunning, .meter, [0.1, 1.0 / 3, 12.5, 85, 1e-7, 1234.5678, 1e20, 2.5e-300, 0.000123]),
            (.runningSpeed, .meterPerSecond, [2.9, 0.05, 3.141592653589793, 10]),
            // A molar unit's "<" and ">" and the "." of its molar mass, written as the encoder writes them.
            (.bloodGlucose, .millimolePerLiterOfGlucose, [5.5, 6, 12.25]),
            (.bodyTemperature, .degreeCelsius, [36.6, 37, -0.5]),
        ]
        let dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_800_000_000.123456),
            Date(timeIntervalSince1970: 1_800_000_000.9999996), Date(timeIntervalSince1970: -1_000_000.5),
            Date(timeIntervalSince1970: 1_763_790_000.25),
        ]
        let encoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        var fast = 0
        var total = 0
        for (deviceIndex, device) in devices.enumerated() {
            for (type, unit, values) in kinds {
                for (valueIndex, value) in values.enumerated() {
                    let start = dates[(deviceIndex + valueIndex) % dates.count]
                    let metadata: Metadata = valueIndex == 2 ? [.heartRateSensorLocation: .string("chest")] : [:]
                    let sample = try QuantitySample(
                        id: ids.next(), type: type, quantity: Quantity(value, unit), start: start,
                        end: start.addingTimeInterval(Double(valueIndex) * 0.5), device: device, metadata: metadata)
                    let expected = Array(try encoder.encode(sample))
                    total += 1
                    guard let written = writer.encode(sample) else { continue }
                    fast += 1
                    XCTAssertEqual(String(decoding: written, as: UTF8.self), String(decoding: expected, as: UTF8.self))
                    // And through the path the sink uses.
                    XCTAssertEqual(
                        try HealthJSONPayload.encode(.quantity(sample), encoder: encoder, writer: &writer), expected)
                }
            }
        }
        // Plain samples take the fast path; the rest were declined, never mis-encoded.
        XCTAssertGreaterThan(fast, total / 3, "fast path taken for \(fast) of \(total)")
    }

    /// The writer remembers the last device's bytes and recognises it by its bits: a device that
    /// changes from sample to sample, comes back, is equal but built from other strings (other
    /// storage, other bits), is absent, or cannot take the fast path must each give what a writer
    /// that never saw a sample gives, and what the encoder writes.
    func testTheRememberedDeviceFollowsEveryChange() throws {
        // Longer than 15 bytes, so each copy made from bytes has storage of its own.
        func fresh(_ text: String) -> String { String(decoding: Array(text.utf8), as: UTF8.self) }
        let polar = Device(
            name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "5.0.0",
            localIdentifier: "A0:9E:1A:12:34:56")
        let samePolarElsewhere = Device(
            name: fresh("Polar H10 1A2B3C4D"), manufacturer: fresh("Polar Electro Oy"), model: "H10",
            firmwareVersion: "5.0.0", localIdentifier: fresh("A0:9E:1A:12:34:56"))
        let otherPolar = Device(
            name: fresh("Polar H10 99999999"), manufacturer: fresh("Polar Electro Oy"), model: "H10",
            firmwareVersion: "5.0.0", localIdentifier: fresh("A0:9E:1A:99:99:99"))
        let devices: [Device?] = [polar, samePolarElsewhere, otherPolar, nil, Device(), Device(name: "Pölar ♥"), polar]
        XCTAssertEqual(polar, samePolarElsewhere)
        let encoder = HealthJSON.makeEncoder()
        var writer = QuantitySampleJSONWriter()
        var generator = SystemRandomNumberGenerator()
        var written = 0
        let start = Date(timeIntervalSince1970: 1_800_000_000.25)
        for index in 0..<600 {
            let device = devices[Int.random(in: 0..<devices.count, using: &generator)]
            let sample = try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(Double(60 + index % 90), .countPerMinute),
                start: start.addingTimeInterval(Double(index)), end: start.addingTimeInterval(Double(index)), device: device)
            var newcomer = QuantitySampleJSONWriter()
            let expected = newcomer.encode(sample)
            let bytes = writer.encode(sample)
            XCTAssertEqual(bytes, expected, "sample \(index), device \(device?.name ?? "none")")
            if let bytes {
                written += 1
                XCTAssertEqual(bytes, Array(try encoder.encode(sample)), "sample \(index)")
            } else {
                XCTAssertEqual(device?.name, "Pölar ♥", "only the device that needs escaping declines")
            }
        }
        XCTAssertGreaterThan(written, 400)
    }
}

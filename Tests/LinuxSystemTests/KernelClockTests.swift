import Foundation
import LinuxSystem
import XCTest

/// The kernel's synchronisation state, read with adjtimex(2), against a reading of the same
/// state by another route: python3's ctypes calling libc's adjtimex with a raw buffer (struct
/// timex on x86-64 and arm64: `status` is the int at byte 40, `maxerror` the long at byte 24).
final class KernelClockTests: XCTestCase {
    func testSynchronizationAgreesWithAnIndependentReading() throws {
        let ours = try KernelClock.synchronization()
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = [
            "-c",
            "import ctypes, struct; b = ctypes.create_string_buffer(256); r = ctypes.CDLL(None).adjtimex(b); "
                + "print(int(r != 5 and not struct.unpack_from('i', b, 40)[0] & 0x40), struct.unpack_from('q', b, 24)[0])",
        ]
        let pipe = Pipe()
        python.standardOutput = pipe
        try python.run()
        python.waitUntilExit()
        let fields = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
        XCTAssertEqual(fields.count, 2, "python3 printed \(fields)")
        XCTAssertEqual(fields.first == "1", ours.synchronized)
        XCTAssertGreaterThanOrEqual(ours.maximumErrorMicroseconds, 0)
        print("kernel clock: synchronized \(ours.synchronized), maximum error \(ours.maximumErrorMicroseconds) µs")
    }

    /// The wall clock less the time since boot agrees with the wall clock less /proc/uptime (the
    /// kernel's CLOCK_BOOTTIME, in hundredths of a second), and stays put between two readings.
    func testWallMinusBootMatchesUptime() throws {
        let first = KernelClock.wallMinusBoot()
        let uptime = try XCTUnwrap(Double(String(decoding: try Data(contentsOf: URL(fileURLWithPath: "/proc/uptime")), as: UTF8.self)
            .split(separator: " ")[0]))
        let wall = Date().timeIntervalSince1970
        XCTAssertEqual(first, wall - uptime, accuracy: 0.5)
        XCTAssertEqual(KernelClock.wallMinusBoot(), first, accuracy: 0.05, "no step between two readings")
    }
}

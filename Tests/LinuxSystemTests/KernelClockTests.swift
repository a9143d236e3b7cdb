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
}

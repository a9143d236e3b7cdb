import Foundation
import Udev
import XCTest

/// libudev against the host. The kernel here has no USB, so hotplug itself is tested in the
/// device lab (Tests/DeviceLab/usb-serial.sh); these check enumeration and the monitor's life.
final class UdevTests: XCTestCase {
    func testEnumeratesTtyDevicesFromSysfs() async throws {
        guard FileManager.default.fileExists(atPath: "/sys/class/tty") else {
            throw XCTSkip("no /sys/class/tty on this host (hardware tty class absent)")
        }
        let devices = try await Udev.devices(subsystem: "tty")
        let sysfs = try FileManager.default.contentsOfDirectory(atPath: "/sys/class/tty")
        XCTAssertEqual(Set(devices.map(\.sysname)), Set(sysfs))
        for device in devices {
            XCTAssertEqual(device.subsystem, "tty")
            XCTAssertTrue(device.syspath.hasPrefix("/sys/devices/"), device.syspath)
        }
        XCTAssertEqual(devices.map(\.syspath), devices.map(\.syspath).sorted())
        // Virtual consoles are marked virtual (`healthgate devices` hides them).
        if let console = devices.first(where: { $0.sysname == "tty0" }) {
            XCTAssertTrue(console.isVirtual)
        }
    }

    func testMonitorStartsAndStopsCleanly() async throws {
        let monitor = try UdevMonitor(subsystem: "tty")
        monitor.stop()
        var events = 0
        for await _ in monitor.events { events += 1 }
        XCTAssertEqual(events, 0, "no tty hotplug happens on this host during the test")
    }
}

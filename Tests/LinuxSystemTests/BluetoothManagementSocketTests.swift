#if canImport(Glibc)
import Glibc
#endif
@testable import LinuxSystem
import Foundation
import XCTest

/// The management socket's address and the capability check, against the kernel's layouts.
final class BluetoothManagementSocketTests: XCTestCase {
    /// `struct sockaddr_hci` (include/net/bluetooth/hci_sock.h): three 16-bit fields, 6 bytes,
    /// family AF_BLUETOOTH (31), device HCI_DEV_NONE, channel HCI_CHANNEL_CONTROL (3).
    func testSocketAddressLayout() {
        XCTAssertEqual(MemoryLayout<sa_family_t>.size, 2, "sockaddr_hci's hci_family is a sa_family_t")
        XCTAssertEqual(BluetoothManagementSocket.socketAddress(), [31, 0, 0xFF, 0xFF, 3, 0])
    }

    /// proc(5)'s CapEff line: root with every capability, a service user with only
    /// CAP_NET_ADMIN (AmbientCapabilities=CAP_NET_ADMIN: 0x1000), none, and malformed text.
    func testCapEffParsing() throws {
        let root = try XCTUnwrap(ProcessCapabilities(status: "Name:\thealthgate\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n"))
        XCTAssertTrue(root.holds(ProcessCapabilities.netAdmin))
        let ambient = try XCTUnwrap(ProcessCapabilities(status: "CapPrm:\t0000000000001000\nCapEff:\t0000000000001000\n"))
        XCTAssertTrue(ambient.holds(ProcessCapabilities.netAdmin))
        XCTAssertFalse(ambient.holds(13))
        let none = try XCTUnwrap(ProcessCapabilities(status: "CapEff:\t0000000000000000\n"))
        XCTAssertFalse(none.holds(ProcessCapabilities.netAdmin))
        XCTAssertNil(ProcessCapabilities(status: "CapPrm:\t0000000000001000\n"))
        XCTAssertNil(ProcessCapabilities(status: "CapEff:\tzz\n"))
        XCTAssertNil(ProcessCapabilities(status: "CapEff:\t\n"))
        XCTAssertFalse(none.holds(64))
    }

    /// This process's own set is the CapEff of /proc/self/status (as Foundation reads the file).
    func testCurrentCapabilitiesAreRead() throws {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("CapEff:") })
        let mask = try XCTUnwrap(UInt64(line.split(separator: "\t").last ?? "", radix: 16))
        XCTAssertEqual(try ProcessCapabilities.current().effective, mask)
    }
}

import CPlatformLayout
#if canImport(Glibc)
import Glibc
#endif
@testable import LinuxSystem
import XCTest

/// The C structs LinuxSystem reads or writes through raw memory, checked against this platform's
/// headers as its C compiler lays them out (CPlatformLayout). The same tests run on amd64 and, as
/// arm64 under qemu-user, against the arm64 headers (scripts/build-arm64 arm64-tests), so nothing
/// here holds only on x86-64. The audit of every raw-memory use is in
/// Sources/System/LinuxSystem/README.md, "Struct layouts".
final class PlatformLayoutTests: XCTestCase {
    /// RFCOMMSocket builds `struct sockaddr_rc` byte by byte (libbluetooth is never linked): the
    /// bytes must be the ones C writes field by field into the header's struct, padding included,
    /// for addresses and channels whose bytes all differ.
    func testTheRFCOMMAddressIsTheHeadersStructByteForByte() throws {
        let size = hg_layout_sockaddr_rc_size()
        // Which declaration the probe compiled, for the log of each architecture's run.
        print("sockaddr_rc: \(size) bytes, from \(hg_layout_rfcomm_from_header() == 1 ? "<bluetooth/rfcomm.h>" : "the kernel's declaration (no libbluetooth-dev)")")
        XCTAssertEqual(hg_layout_sockaddr_rc_family_offset(), 0)
        for (text, channel) in [("00:1A:7D:DA:71:13", UInt8(1)), ("FE:DC:BA:98:76:54", 30), ("01:02:03:04:05:06", 17)] {
            let address = try XCTUnwrap(BluetoothAddress(text))
            let swift = RFCOMMSocket.socketAddress(address: address, channel: channel)
            var c = [UInt8](repeating: 0xEE, count: size)
            address.bytes.withUnsafeBufferPointer { printed in
                c.withUnsafeMutableBufferPointer { out in
                    guard let printed = printed.baseAddress, let out = out.baseAddress else { return }
                    hg_layout_fill_sockaddr_rc(printed, channel, out)
                }
            }
            XCTAssertEqual(swift, c, "\(text) channel \(channel): sockaddr_rc of \(size) bytes, bdaddr at \(hg_layout_sockaddr_rc_bdaddr_offset()), channel at \(hg_layout_sockaddr_rc_channel_offset()); header used: \(hg_layout_rfcomm_from_header() == 1)")
            XCTAssertEqual(Int(swift[hg_layout_sockaddr_rc_channel_offset()]), Int(channel))
        }
        XCTAssertEqual(RFCOMMSocket.addressFamily, hg_layout_af_bluetooth())
        XCTAssertEqual(RFCOMMSocket.protocolRFCOMM, hg_layout_btproto_rfcomm())
    }

    /// UnixStreamSocket fills `sun_path` through raw bytes and bounds the path by its length.
    func testTheUnixSocketAddressIsTheOneCFills() throws {
        XCTAssertEqual(MemoryLayout<sockaddr_un>.size, hg_layout_sockaddr_un_size())
        XCTAssertEqual(MemoryLayout<sockaddr_un>.offset(of: \.sun_path), hg_layout_sockaddr_un_path_offset())
        let capacity = hg_layout_sockaddr_un_path_length()
        XCTAssertEqual(MemoryLayout.size(ofValue: sockaddr_un().sun_path), capacity)
        for path in ["/run/healthgate/control.sock", "/tmp/" + String(repeating: "x", count: capacity - 6)] {
            var swift = try UnixStreamSocket.address(path)
            var c = [UInt8](repeating: 0xEE, count: hg_layout_sockaddr_un_size())
            let filled = c.withUnsafeMutableBufferPointer { out in
                out.baseAddress.map { hg_layout_fill_sockaddr_un(path, $0) } ?? -1
            }
            XCTAssertEqual(filled, 0, path)
            XCTAssertEqual(withUnsafeBytes(of: &swift) { Array($0) }, c, "\(path.utf8.count) bytes")
        }
        // One byte more than fits with the NUL: refused by both.
        let tooLong = "/" + String(repeating: "y", count: capacity - 1)
        XCTAssertFalse(UnixStreamSocket.fits(tooLong))
        var out = [UInt8](repeating: 0, count: hg_layout_sockaddr_un_size())
        XCTAssertEqual(out.withUnsafeMutableBufferPointer { hg_layout_fill_sockaddr_un(tooLong, $0.baseAddress) }, -1)
    }

    /// Termios writes VMIN and VTIME into `c_cc` through raw bytes at the header's indices; C must
    /// read back what it wrote, and the struct Swift sees must be the header's.
    func testTheControlCharactersTermiosWritesAreTheOnesCReads() {
        XCTAssertEqual(MemoryLayout<termios>.size, hg_layout_termios_size())
        XCTAssertEqual(MemoryLayout<termios>.offset(of: \.c_cflag), hg_layout_termios_cflag_offset())
        XCTAssertEqual(MemoryLayout<termios>.offset(of: \.c_cc), hg_layout_termios_cc_offset())
        XCTAssertEqual(MemoryLayout.size(ofValue: termios().c_cc), hg_layout_termios_cc_length())
        XCTAssertEqual(Int(VMIN), Int(hg_layout_termios_vmin_index()))
        XCTAssertEqual(Int(VTIME), Int(hg_layout_termios_vtime_index()))
        XCTAssertLessThan(Int(max(VMIN, VTIME)), hg_layout_termios_cc_length())
        var attributes = termios()
        withUnsafeMutableBytes(of: &attributes.c_cc) { $0.initializeMemory(as: UInt8.self, repeating: 0x55) }
        Termios.apply(SerialConfiguration(baudRate: 57600, dataBits: 7, parity: .even, stopBits: 2, flowControl: .none), to: &attributes)
        XCTAssertEqual(hg_layout_termios_vmin(&attributes), 1)
        XCTAssertEqual(hg_layout_termios_vtime(&attributes), 0)
        XCTAssertEqual(cfgetospeed(&attributes), speed_t(B57600))
        XCTAssertEqual(Termios.describe(attributes).configuration?.baudRate, 57600)
    }

    /// KernelClock sets `modes` and reads `status` and `maxerror` of the header's struct timex.
    func testTheTimexFieldsKernelClockUsesAreTheHeaders() {
        XCTAssertEqual(MemoryLayout<timex>.size, hg_layout_timex_size())
        XCTAssertEqual(MemoryLayout<timex>.offset(of: \.modes), hg_layout_timex_modes_offset())
        XCTAssertEqual(MemoryLayout<timex>.offset(of: \.maxerror), hg_layout_timex_maxerror_offset())
        XCTAssertEqual(MemoryLayout<timex>.offset(of: \.status), hg_layout_timex_status_offset())
    }

    /// The test servers and the live board pass a `sockaddr_in` by pointer.
    func testTheIPv4SocketAddressIsTheHeaders() {
        XCTAssertEqual(MemoryLayout<sockaddr_in>.size, hg_layout_sockaddr_in_size())
        XCTAssertEqual(MemoryLayout<sockaddr_in>.offset(of: \.sin_port), hg_layout_sockaddr_in_port_offset())
        XCTAssertEqual(MemoryLayout<sockaddr_in>.offset(of: \.sin_addr), hg_layout_sockaddr_in_addr_offset())
    }

    /// The fixed-width Swift integers passed where C takes `int`, `long`, `size_t` or `double`
    /// (D-Bus basic values, ioctl arguments, libcurl options and callbacks).
    func testTheCTypesPassedAsSwiftIntegersHaveTheirWidths() {
        XCTAssertEqual(MemoryLayout<Int32>.size, hg_layout_int_size())
        XCTAssertEqual(MemoryLayout<CInt>.size, hg_layout_int_size())
        XCTAssertEqual(MemoryLayout<Int>.size, hg_layout_long_size())
        XCTAssertEqual(MemoryLayout<CLong>.size, hg_layout_long_size())
        XCTAssertEqual(MemoryLayout<Int>.size, hg_layout_size_t_size())
        XCTAssertEqual(MemoryLayout<Double>.size, hg_layout_double_size())
    }
}

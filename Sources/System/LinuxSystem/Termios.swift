#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

// termios(3) mapping between SerialConfiguration and `struct termios`. Internal: no C type leaves
// this module.
enum Termios {
    static func speed(for baudRate: Int) -> speed_t? {
        switch baudRate {
        case 1200: speed_t(B1200)
        case 2400: speed_t(B2400)
        case 4800: speed_t(B4800)
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 576_000: speed_t(B576000)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_152_000: speed_t(B1152000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 3_000_000: speed_t(B3000000)
        case 4_000_000: speed_t(B4000000)
        default: nil
        }
    }

    static func baudRate(for speed: speed_t) -> Int? {
        SerialConfiguration.supportedBaudRates.first { Self.speed(for: $0) == speed }
    }

    /// Raw mode (cfmakeraw(3): no echo, no canonical lines, no signals, no CR/LF mapping), the
    /// receiver enabled, modem lines ignored, then the configured character format.
    static func apply(_ configuration: SerialConfiguration, to attributes: inout termios) {
        cfmakeraw(&attributes)
        attributes.c_cflag |= tcflag_t(CREAD | CLOCAL)
        attributes.c_cflag &= ~tcflag_t(CSIZE)
        switch configuration.dataBits {
        case 5: attributes.c_cflag |= tcflag_t(CS5)
        case 6: attributes.c_cflag |= tcflag_t(CS6)
        case 7: attributes.c_cflag |= tcflag_t(CS7)
        default: attributes.c_cflag |= tcflag_t(CS8)
        }
        attributes.c_cflag &= ~tcflag_t(PARENB | PARODD)
        attributes.c_iflag &= ~tcflag_t(INPCK)
        switch configuration.parity {
        case .none: break
        case .even:
            attributes.c_cflag |= tcflag_t(PARENB)
            attributes.c_iflag |= tcflag_t(INPCK)
        case .odd:
            attributes.c_cflag |= tcflag_t(PARENB | PARODD)
            attributes.c_iflag |= tcflag_t(INPCK)
        }
        if configuration.stopBits == 2 {
            attributes.c_cflag |= tcflag_t(CSTOPB)
        } else {
            attributes.c_cflag &= ~tcflag_t(CSTOPB)
        }
        attributes.c_cflag &= ~tcflag_t(CRTSCTS)
        attributes.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY)
        switch configuration.flowControl {
        case .none: break
        case .rtscts: attributes.c_cflag |= tcflag_t(CRTSCTS)
        case .xonxoff: attributes.c_iflag |= tcflag_t(IXON | IXOFF)
        }
        // VMIN 1, VTIME 0: with O_NONBLOCK a read of an empty line then fails with EAGAIN, so a
        // 0 from read(2) means a hang-up and nothing else. With VMIN 0 and VTIME 0, n_tty_read
        // returns 0 whenever no byte is waiting ("if (!timeout) break;" comes before the
        // O_NONBLOCK check in drivers/tty/n_tty.c), and the reader took the 0 that follows a full
        // 4096-byte chunk for the peer hanging up.
        withUnsafeMutableBytes(of: &attributes.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        if let speed = speed(for: configuration.baudRate) {
            cfsetispeed(&attributes, speed)
            cfsetospeed(&attributes, speed)
        }
    }

    /// Reads back the settings a `termios` holds, as the typed configuration plus raw-mode facts.
    static func describe(_ attributes: termios) -> TerminalAttributes {
        let c = attributes.c_cflag
        let i = attributes.c_iflag
        let l = attributes.c_lflag
        let dataBits: Int = switch c & tcflag_t(CSIZE) {
        case tcflag_t(CS5): 5
        case tcflag_t(CS6): 6
        case tcflag_t(CS7): 7
        default: 8
        }
        let parity: SerialConfiguration.Parity =
            c & tcflag_t(PARENB) == 0 ? .none : (c & tcflag_t(PARODD) != 0 ? .odd : .even)
        let flow: SerialConfiguration.FlowControl =
            c & tcflag_t(CRTSCTS) != 0 ? .rtscts : (i & tcflag_t(IXON) != 0 ? .xonxoff : .none)
        var copy = attributes
        let speed = cfgetospeed(&copy)
        return TerminalAttributes(
            baudRate: baudRate(for: speed), dataBits: dataBits, parity: parity,
            stopBits: c & tcflag_t(CSTOPB) != 0 ? 2 : 1, flowControl: flow,
            isRaw: l & tcflag_t(ICANON | ECHO | ISIG) == 0 && i & tcflag_t(ICRNL | INLCR | IGNCR) == 0,
            receiverEnabled: c & tcflag_t(CREAD) != 0,
            ignoresModemLines: c & tcflag_t(CLOCAL) != 0)
    }
}

/// What tcgetattr(3) reports for a terminal, in typed form (for verification and diagnostics).
public struct TerminalAttributes: Hashable, Sendable {
    /// The output speed, nil if it is not one of ``SerialConfiguration/supportedBaudRates``.
    public var baudRate: Int?
    public var dataBits: Int
    public var parity: SerialConfiguration.Parity
    public var stopBits: Int
    public var flowControl: SerialConfiguration.FlowControl
    /// No canonical mode, echo, signals or CR/LF translation (what cfmakeraw sets).
    public var isRaw: Bool
    /// `CREAD` is set.
    public var receiverEnabled: Bool
    /// `CLOCAL` is set.
    public var ignoresModemLines: Bool

    /// The attributes as a configuration, if the speed is a supported one.
    public var configuration: SerialConfiguration? {
        baudRate.map {
            SerialConfiguration(
                baudRate: $0, dataBits: dataBits, parity: parity, stopBits: stopBits, flowControl: flowControl)
        }
    }
}

/// tcgetattr(3) on `fd`, typed.
func terminalAttributes(of fd: Int32) throws(Errno) -> TerminalAttributes {
    var attributes = termios()
    try Errno.retryingInterrupts { tcgetattr(fd, &attributes) }
    return Termios.describe(attributes)
}

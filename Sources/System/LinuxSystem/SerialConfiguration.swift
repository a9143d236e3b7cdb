/// Line settings for a serial port, applied with termios(3) in raw mode.
public struct SerialConfiguration: Hashable, Sendable, Codable {
    /// Parity checking (termios `PARENB`/`PARODD`).
    public enum Parity: String, Hashable, Sendable, Codable, CaseIterable {
        case none, even, odd
    }

    /// Flow control: none, hardware RTS/CTS (`CRTSCTS`), or software XON/XOFF (`IXON|IXOFF`).
    public enum FlowControl: String, Hashable, Sendable, Codable, CaseIterable {
        case none, rtscts, xonxoff
    }

    /// The baud rates termios can set with a `B…` constant.
    public static let supportedBaudRates: [Int] = [
        1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000,
        921600, 1_000_000, 1_152_000, 1_500_000, 2_000_000, 3_000_000, 4_000_000,
    ]

    /// Bits per second; one of ``supportedBaudRates``.
    public var baudRate: Int
    /// Data bits per character, 5 to 8.
    public var dataBits: Int
    public var parity: Parity
    /// Stop bits, 1 or 2.
    public var stopBits: Int
    public var flowControl: FlowControl

    /// Creates a configuration; 115200 8N1 without flow control by default. Call ``validate()``
    /// (``SerialPort`` does) to reject impossible values.
    public init(
        baudRate: Int = 115_200, dataBits: Int = 8, parity: Parity = .none, stopBits: Int = 1,
        flowControl: FlowControl = .none
    ) {
        self.baudRate = baudRate
        self.dataBits = dataBits
        self.parity = parity
        self.stopBits = stopBits
        self.flowControl = flowControl
    }

    /// A problem with a configuration: which field and why.
    public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        /// The field name: `baudRate`, `dataBits` or `stopBits`.
        public var field: String
        public var reason: String
        public var description: String { "\(field): \(reason)" }
    }

    /// Checks every field.
    public func validate() throws(Invalid) {
        guard Self.supportedBaudRates.contains(baudRate) else {
            throw Invalid(
                field: "baudRate",
                reason: "\(baudRate) is not a termios rate; use one of "
                    + Self.supportedBaudRates.map(String.init).joined(separator: ", "))
        }
        guard (5...8).contains(dataBits) else {
            throw Invalid(field: "dataBits", reason: "\(dataBits) is not 5, 6, 7 or 8")
        }
        guard stopBits == 1 || stopBits == 2 else {
            throw Invalid(field: "stopBits", reason: "\(stopBits) is not 1 or 2")
        }
    }

    /// `115200 8N1 none`.
    public var summary: String {
        let p = switch parity {
        case .none: "N"
        case .even: "E"
        case .odd: "O"
        }
        return "\(baudRate) \(dataBits)\(p)\(stopBits) \(flowControl.rawValue)"
    }
}

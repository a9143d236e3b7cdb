public import LinuxSystem

/// The `config` object of a `serial-pedometer` source (documented key by key in
/// plugins/SerialPedometer/sample-config.json and README.md).
///
/// Exactly one of `path`, `rfcomm` or `udev: true` says where the pedometer is.
public struct SerialPedometerConfiguration: Decodable, Sendable, Hashable {
    /// An RFCOMM (Bluetooth serial) endpoint.
    public struct RFCOMM: Decodable, Sendable, Hashable {
        /// `AA:BB:CC:DD:EE:FF`.
        public var address: String
        /// 1–30.
        public var channel: Int
    }

    /// A tty, a pty or a bound `/dev/rfcommN`; reopened whenever it comes back.
    public var path: String?
    /// Connect an RFCOMM socket directly (no `rfcomm bind` needed).
    public var rfcomm: RFCOMM?
    /// Discover devices tagged `HEALTHGATE_ADAPTER=serial-pedometer` by our udev rules.
    public var udev: Bool?
    /// Default 115200.
    public var baudRate: Int?
    /// 5–8, default 8.
    public var dataBits: Int?
    /// `none` (default), `even`, `odd`.
    public var parity: SerialConfiguration.Parity?
    /// 1 (default) or 2.
    public var stopBits: Int?
    /// `none` (default), `rtscts`, `xonxoff`.
    public var flowControl: SerialConfiguration.FlowControl?
    /// The protocol, default `hgp1`; udev's `HEALTHGATE_DECODER` overrides it per device.
    public var decoder: String?
    /// The longest accepted line in bytes, default 256 (16–4096).
    public var maxLineLength: Int?
    /// Lock the tty against other openers (TIOCEXCL + flock), default true.
    public var exclusive: Bool?
    /// Seconds between reopen attempts of a missing `path` or `rfcomm` device, default 2.
    public var reconnectInterval: Double?
    /// Seconds to wait for the answer to `ID?` before counting under the transport identity,
    /// default 3.
    public var identificationTimeout: Double?
    /// Intervals longer than this many seconds are flagged as gaps, default 900.
    public var gapThreshold: Double?
    /// The largest counter decrease read as a uint32 wrap-around rather than a reboot, default 100000.
    public var wrapTolerance: Int?
    /// A display name for a device at `path` or `rfcomm` until it identifies itself.
    public var deviceName: String?
}

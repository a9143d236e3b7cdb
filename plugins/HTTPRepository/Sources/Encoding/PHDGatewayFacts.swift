public import GatewayTime
import HealthModel

/// What the gateway knows of itself for its PhgDevice (StructureDefinition.PhgDevice.fsh, whose
/// purpose says "the quantities that are required to be reported are the system identifier, the
/// time synchronization method, the manufacturer and model number"): a permanent hardware address
/// of the machine, from which its system identifier is derived, and how its wall clock is
/// synchronised. Facts of the machine the sink runs on, read when the sink starts and given to
/// the ``PayloadBuilder``; they are part of its identity, so a body built with other facts goes
/// under another key. Readings that name another gateway (`healthgate.gateway`) get none of them.
public struct PHDGatewayFacts: Sendable, Hashable {
    /// A permanent EUI-48 of the machine (a network interface's MAC), canonical
    /// (`DC:A6:32:12:34:56`); nil when none is known.
    public var hardwareAddress: String?
    /// How the wall clock is synchronised.
    public var timeSync: TimeSync

    /// The MDC time synchronization methods the gateway can state (ValueSet.MDCTimeSyncMethods.fsh).
    public enum TimeSync: Sendable, Hashable {
        /// MDC_TIME_SYNC_NTPV4: the kernel's NTP discipline says the clock is synchronised
        /// (adjtimex(2), `STA_UNSYNC` clear); the daemon behind it (chrony, ntpd,
        /// systemd-timesyncd) is not known, the kernel's interface is NTP's (RFC 5905).
        case ntpv4
        /// MDC_TIME_SYNC_SNTPV4330: only systemd-timesyncd's flag file says so, and timesyncd is
        /// an SNTP client (RFC 4330).
        case sntpv4
        /// MDC_TIME_SYNC_NONE: not synchronised, or a real-time clock the configuration declares
        /// right (`clock.trusted`), which no protocol sets.
        case none

        /// The clock state's method.
        public init(_ state: ClockState) {
            switch state {
            case .synchronized(_?): self = .ntpv4
            case .synchronized(nil): self = .sntpv4
            case .unsynchronized, .declaredTrusted: self = .none
            }
        }

        /// The MDC code and reference identifier (ValueSet.MDCTimeSyncMethods.fsh).
        var code: (code: UInt32, reference: String) {
            switch self {
            case .ntpv4: (532_226, "MDC_TIME_SYNC_NTPV4")
            case .sntpv4: (532_228, "MDC_TIME_SYNC_SNTPV4330")
            case .none: (532_224, "MDC_TIME_SYNC_NONE")
            }
        }
    }

    /// - Parameters:
    ///   - hardwareAddress: a permanent EUI-48 in any of the forms ``HealthModel/DeviceIdentity``
    ///     reads (`dc:a6:32:12:34:56`); anything else is ignored.
    ///   - timeSync: how the clock is synchronised.
    public init(hardwareAddress: String? = nil, timeSync: TimeSync = .none) {
        self.hardwareAddress = hardwareAddress.flatMap(Self.eui48)
        self.timeSync = timeSync
    }

    /// The address as the guide writes an EUI-48: capitals separated by dashes (`DC-A6-32-12-34-56`).
    var eui48: String? { hardwareAddress.map { $0.split(separator: ":").joined(separator: "-") } }

    /// The system identifier: the EUI-64 the IEEE derives from an EUI-48 by inserting FF-FE
    /// between its OUI and its extension (`DC-A6-32-FF-FE-12-34-56`), the form the guide's
    /// identifier takes ("an 8-byte HEX string where each byte is separated by dashes",
    /// PhgDevice.fsh, identifier[systemIdIdentifier]).
    var systemIdentifier: String? {
        guard let octets = eui48?.split(separator: "-") else { return nil }
        return (octets[0..<3] + ["FF", "FE"] + octets[3...]).joined(separator: "-")
    }

    /// The facts as a stable text, part of the builder's identity.
    var identity: String { "phg=\(hardwareAddress ?? "-")/\(timeSync.code.code)" }

    /// `text` as a canonical EUI-48 (`DC:A6:32:12:34:56`), nil when it is none or all zeros.
    static func eui48(_ text: String) -> String? {
        let canonical = DeviceIdentity(text).canonical
        let octets = canonical.split(separator: ":", omittingEmptySubsequences: false)
        guard octets.count == 6, octets.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }),
            octets.contains(where: { $0 != "00" })
        else { return nil }
        return canonical
    }
}

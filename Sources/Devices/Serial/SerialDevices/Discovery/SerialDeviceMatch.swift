public import Udev

/// Which ttys a serial family member reads when it follows udev: those healthgate's udev rules
/// tagged `HEALTHGATE_ADAPTER=<kind>`, whose `HEALTHGATE_DECODER` (default ``defaultProtocol``)
/// is one of the member's compiled-in ``protocols``.
///
/// `healthgate devices` asks every serial member in the catalog, so the REASON column says
/// which member would read a device, and why not when none would.
public struct SerialDeviceMatch: Sendable, Hashable {
    /// The member's plugin kind, which the rules put in `HEALTHGATE_ADAPTER`: `serial-pedometer`.
    public let kind: String
    /// The protocols the member speaks, by the names `HEALTHGATE_DECODER` and the `decoder` key
    /// take.
    public let protocols: [String]
    /// The protocol of a tagged device without `HEALTHGATE_DECODER`.
    public let defaultProtocol: String
    /// The rules file that tags the member's devices, for the reason of an untagged tty:
    /// `70-healthgate-pedometer.rules`.
    public let rulesFile: String

    public init(kind: String, protocols: [String], defaultProtocol: String, rulesFile: String) {
        self.kind = kind
        self.protocols = protocols
        self.defaultProtocol = defaultProtocol
        self.rulesFile = rulesFile
    }

    /// Whether the member reads `device`, and why or why not, in words for `healthgate devices`
    /// and the log.
    public func eligibility(of device: UdevDevice) -> SerialDeviceEligibility {
        guard device.devnode != nil else { return SerialDeviceEligibility(eligible: false, reason: "no device node") }
        guard let adapter = device.healthgateAdapter else {
            return SerialDeviceEligibility(eligible: false, reason: "not tagged by \(rulesFile) (no HEALTHGATE_ADAPTER)")
        }
        guard adapter == kind else {
            return SerialDeviceEligibility(eligible: false, reason: "HEALTHGATE_ADAPTER=\(adapter) is another plugin's")
        }
        let name = protocolName(of: device)
        guard protocols.contains(name) else {
            return SerialDeviceEligibility(eligible: false, reason: "HEALTHGATE_DECODER=\(name) is not a compiled-in protocol")
        }
        return SerialDeviceEligibility(eligible: true, reason: "HEALTHGATE_ADAPTER=\(adapter), decoder \(name)")
    }

    /// The protocol `device` speaks: udev's `HEALTHGATE_DECODER`, else ``defaultProtocol``.
    public func protocolName(of device: UdevDevice) -> String {
        device.healthgateDecoder ?? defaultProtocol
    }

    /// Whether the family reads `device`, by the first of `matches` whose kind the device is
    /// tagged with; untagged or tagged for no member, the reason names every member's rules.
    public static func eligibility(of device: UdevDevice, among matches: [SerialDeviceMatch]) -> SerialDeviceEligibility {
        if let adapter = device.healthgateAdapter, let match = matches.first(where: { $0.kind == adapter }) {
            return match.eligibility(of: device)
        }
        guard let first = matches.first else {
            return SerialDeviceEligibility(eligible: false, reason: "no serial device family is compiled in")
        }
        guard device.devnode != nil, device.healthgateAdapter == nil, matches.count > 1 else {
            return first.eligibility(of: device)
        }
        let rules = Array(Set(matches.map(\.rulesFile))).sorted().joined(separator: " or ")
        return SerialDeviceEligibility(eligible: false, reason: "not tagged by \(rules) (no HEALTHGATE_ADAPTER)")
    }
}

/// Whether a serial family member reads a tty, and why (or why not).
public struct SerialDeviceEligibility: Sendable, Hashable {
    public var eligible: Bool
    /// In words: `HEALTHGATE_ADAPTER=serial-pedometer, decoder hgp1`, `no device node`.
    public var reason: String

    public init(eligible: Bool, reason: String) {
        self.eligible = eligible
        self.reason = reason
    }
}

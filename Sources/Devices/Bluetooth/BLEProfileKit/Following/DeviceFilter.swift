public import BLETransport
/// Decides whether a discovered peripheral is one this source follows.
///
/// BlueZ merges the discovery filters of every client (Adapter1.SetDiscoveryFilter), so a
/// discovery session can report devices another client asked for: every device is checked here.
public struct DeviceFilter: Sendable, Hashable {
    /// The services a followed device advertises (one of them is enough).
    public var services: [BluetoothUUID]
    /// What the configuration selected.
    public var selection: DeviceSelection

    /// A filter for `selection` among devices advertising one of `services`.
    public init(services: [BluetoothUUID], selection: DeviceSelection) {
        self.services = services
        self.selection = selection
    }

    /// Whether to follow `peripheral`. An address matcher matches the address alone (a device
    /// named by address need not advertise its services in every packet); `any` and name
    /// patterns also require one of ``services`` advertised.
    public func matches(_ peripheral: DiscoveredPeripheral) -> Bool {
        switch selection {
        case .any:
            return peripheral.serviceUUIDs.contains { services.contains($0) }
        case .matching:
            return matcher(for: peripheral) != nil
        }
    }

    /// The addresses the selection names (upper case): discovery reports them whatever they
    /// advertise.
    public var addresses: Set<String> {
        guard case .matching(let matchers) = selection else { return [] }
        return Set(matchers.compactMap { matcher in
            if case .address(let address) = matcher.pattern { return address }
            return nil
        })
    }

    /// The first configured matcher `peripheral` matches; nil for `any` or no match.
    public func matcher(for peripheral: DiscoveredPeripheral) -> DeviceMatcher? {
        guard case .matching(let matchers) = selection else { return nil }
        let advertises = peripheral.serviceUUIDs.contains { services.contains($0) }
        return matchers.first { matcher in
            switch matcher.pattern {
            case .address(let address):
                return peripheral.address.uppercased() == address
            case .name(let pattern):
                guard advertises, let name = peripheral.name else { return false }
                return Self.glob(pattern, matches: name)
            }
        }
    }

    /// Shell-style matching: `*` matches any run (also empty), `?` one character; case-sensitive.
    public static func glob(_ pattern: String, matches text: String) -> Bool {
        let p = Array(pattern)
        let t = Array(text)
        var pi = 0
        var ti = 0
        var star: Int?
        var resume = 0
        while ti < t.count {
            if pi < p.count, p[pi] == "?" || p[pi] == t[ti], p[pi] != "*" {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi
                resume = ti
                pi += 1
            } else if let s = star {
                pi = s + 1
                resume += 1
                ti = resume
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

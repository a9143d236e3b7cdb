/// What a scan of one adapter must hear: its advertisement consumers' matches and its
/// connection-based consumers' discovery. The adapter's shared scan
/// (``SharedAdvertisementScanner``) runs one underlying scan for the union of its consumers'
/// interests (``union(_:)``), and the stack turns that union into what it asks the adapter for
/// (BlueZ: a monitor's patterns, the discovery filter, whether to discover at all).
public struct ScanInterest: Sendable, Hashable {
    /// What advertisement consumers listen for (any of these; empty: every advertisement); nil
    /// when the scan has no advertisement consumer.
    public var advertisements: [AdvertisementMatch]?
    /// What connection-based consumers discover; nil when the scan has none.
    public var discovery: DiscoveryInterest?

    /// An interest in `advertisements` and in `discovery`.
    public init(advertisements: [AdvertisementMatch]? = nil, discovery: DiscoveryInterest? = nil) {
        self.advertisements = advertisements
        self.discovery = discovery
    }

    /// What one scan serving every one of `interests` must hear: the advertisement matches'
    /// union (``SharedAdvertisementScanner/union(_:)``: everything when one consumer asks for
    /// everything), and the discovery interests' union (services and addresses, each once, in
    /// order).
    public static func union(_ interests: [ScanInterest]) -> ScanInterest {
        let matches = interests.compactMap(\.advertisements)
        let discoveries = interests.compactMap(\.discovery)
        var services: [BluetoothUUID] = []
        var addresses: Set<String> = []
        for discovery in discoveries {
            for service in discovery.services where !services.contains(service) { services.append(service) }
            addresses.formUnion(discovery.addresses)
        }
        return ScanInterest(
            advertisements: matches.isEmpty ? nil : SharedAdvertisementScanner.union(matches),
            discovery: discoveries.isEmpty ? nil : DiscoveryInterest(services: services, addresses: addresses))
    }

    /// Whether a scan for `self` hears everything a scan for `other` hears (so a consumer with
    /// `other` can join it).
    public func covers(_ other: ScanInterest) -> Bool {
        if let wanted = other.advertisements {
            guard let heard = advertisements else { return false }
            if !heard.isEmpty, wanted.isEmpty || !Set(wanted).isSubset(of: Set(heard)) { return false }
        }
        if let wanted = other.discovery {
            guard let discovered = discovery else { return false }
            guard Set(wanted.services).isSubset(of: Set(discovered.services)), wanted.addresses.isSubset(of: discovered.addresses)
            else { return false }
        }
        return true
    }
}

/// What a connection-based consumer discovers: devices advertising one of `services`, and the
/// devices at `addresses` whatever they advertise (a bonded device may advertise without its
/// services).
public struct DiscoveryInterest: Sendable, Hashable {
    /// The services a wanted device advertises (one is enough).
    public var services: [BluetoothUUID]
    /// Addresses wanted whatever they advertise, upper case.
    public var addresses: Set<String>

    /// Devices advertising one of `services`, and those at `addresses`.
    public init(services: [BluetoothUUID], addresses: Set<String> = []) {
        self.services = services
        self.addresses = Set(addresses.map { $0.uppercased() })
    }

    /// Whether the consumer wants `peripheral`: it advertises one of the services, or its
    /// address is one of the addresses. A scan reports every device it finds; each consumer
    /// keeps its own (the stack's filter is the union of every consumer's, and BlueZ merges the
    /// filters of all its clients too).
    public func accepts(_ peripheral: DiscoveredPeripheral) -> Bool {
        !Set(services).isDisjoint(with: peripheral.serviceUUIDs) || addresses.contains(peripheral.address.uppercased())
    }
}

/// What one scan of an adapter reports: advertisements for advertisement consumers, devices
/// found and lost for connection-based ones.
public enum ScanEvent: Sendable, Hashable {
    /// An advertisement was heard (a scan with an advertisement interest).
    case advertisement(Advertisement)
    /// A device appeared, changed or went (a scan with a discovery interest): every device the
    /// scan knows on the adapter, unfiltered; consumers filter (``DiscoveryInterest/accepts(_:)``).
    case discovery(DiscoveryEvent)
}

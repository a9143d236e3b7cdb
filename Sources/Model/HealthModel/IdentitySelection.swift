/// A list of devices as a workout's or a participant's `devices` names them (local identifiers,
/// names, display names, radio identities), parsed once into canonical ``DeviceIdentity``s, so
/// that testing many samples' devices against it parses nothing more
/// (``Device/matches(_:selection:)`` with the list parses it at every call).
public struct IdentitySelection: Hashable, Sendable {
    /// The list as given; nil takes every device.
    public let names: [String]?
    private let identities: Set<DeviceIdentity>

    /// The selection `names` gives; nil takes every device.
    public init(_ names: [String]?) {
        self.names = names
        identities = Set((names ?? []).map(DeviceIdentity.init))
    }

    /// Whether `device` is in the selection, as ``Device/matches(_:selection:)`` decides: any of
    /// its ``Device/identities`` is one of the selection's. A nil selection takes every device;
    /// a record without a device matches only then.
    public func matches(_ device: Device?) -> Bool {
        guard names != nil else { return true }
        guard let device else { return false }
        return !identities.isDisjoint(with: device.identities)
    }
}

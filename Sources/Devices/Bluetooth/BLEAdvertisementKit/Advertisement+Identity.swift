public import BLETransport
public import HealthModel

extension Advertisement {
    /// The sender's address as a device identity (upper case with `:`).
    public var addressIdentity: DeviceIdentity { DeviceIdentity(address) }

    /// The sender as logs and status name it: `identity`, with the address when that is another
    /// (`1A2B3C4D (A0:9E:1A:12:34:56)`).
    public func naming(_ identity: DeviceIdentity) -> String {
        let address = addressIdentity
        return identity == address ? identity.canonical : "\(identity) (\(address))"
    }
}

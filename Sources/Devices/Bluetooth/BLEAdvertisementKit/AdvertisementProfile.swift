public import BLETransport
public import HealthModel

/// A device that only advertises, as the advertisement kit needs it: what it matches, how its
/// advertisements decode, how a device is identified, the rate it needs and its simulator. The
/// plugin supplies one per device family (Polar's heart-rate broadcast, Xiaomi's scales); the kit
/// scans, matches, measures and hands each decoded reading to the plugin's source.
public protocol AdvertisementProfile: Sendable {
    /// What one advertisement decodes to.
    associatedtype Reading: Sendable
    /// The profile's errors: a payload that does not decode.
    associatedtype DecodingFailure: Error

    /// The profile's name for logs and status: `Polar heart-rate broadcast`.
    static var displayName: String { get }
    /// What the profile listens for; an advertisement matching any of them is the profile's.
    static var matches: [AdvertisementMatch] { get }
    /// The advertisements per second a device must be heard at for the profile's readings to
    /// be complete (a strap's heart rate: 1); nil when any rate will do (a scale repeats its
    /// weighing).
    static var requiredRate: Double? { get }

    /// Decodes a matched advertisement; nil when it carries nothing for the profile (a Polar
    /// watch advertising without heart rate). Pure. Throws for a payload that does not decode.
    static func decode(_ advertisement: Advertisement) throws(DecodingFailure) -> Reading?

    /// The device's identity: what its samples are stored under, its state is kept by and a
    /// participant's `devices` name it by (Polar: the device id in its name, else the address).
    /// Pure.
    static func identity(of advertisement: Advertisement) -> DeviceIdentity
}

extension AdvertisementProfile {
    /// Whether any of the profile's matches selects `advertisement`.
    public static func matches(_ advertisement: Advertisement) -> Bool {
        matches.contains { $0.matches(advertisement) }
    }

    /// By default a device is its address.
    public static func identity(of advertisement: Advertisement) -> DeviceIdentity {
        advertisement.addressIdentity
    }
}

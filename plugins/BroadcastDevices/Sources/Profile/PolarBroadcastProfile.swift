public import BLEAdvertisementKit
public import BLETransport
public import FoundationEssentials
public import HealthModel

/// Polar's heart-rate broadcast (H9, H10, OH1, Verity Sense, watches with "HR visible to other
/// devices"): manufacturer data of company 0x006B, about one new value a second.
public enum PolarBroadcastProfile: AdvertisementProfile {
    /// For logs and status.
    public static let displayName = "Polar heart-rate broadcast"
    /// Manufacturer data of Polar Electro Oy (0x006B).
    public static let matches: [AdvertisementMatch] = [.manufacturer(PolarBroadcastDecoder.companyIdentifier)]
    /// How many advertisements of a simulated strap repeat each value (at 4 advertisements a
    /// second, one new value a second, as a real strap).
    public static let simulatedAdvertisementsPerValue = 4
    /// A strap computes a new heart rate about once a second.
    public static let requiredRate: Double? = 1

    /// The heart-rate block, or nil when the device advertises without one.
    public static func decode(_ advertisement: Advertisement) throws(AdvertisementDecodingError) -> PolarHeartRateBlock? {
        guard let data = advertisement.manufacturerData[PolarBroadcastDecoder.companyIdentifier] else { return nil }
        return try PolarBroadcastDecoder.decode(data).heartRate
    }

    /// The device id in the name ("Polar H10 1A2B3C4D" → `1A2B3C4D`), as Polar's SDK reads it
    /// (`BleAdvertisementContent.processName`: the last word of a name starting with "Polar");
    /// else the address. The rule is DeviceIdentity's, so that a participant's Polar id names
    /// this strap.
    public static func identity(of advertisement: Advertisement) -> DeviceIdentity {
        advertisement.name.flatMap(DeviceIdentity.polarDeviceID(inName:)) ?? advertisement.addressIdentity
    }

    /// The model in a name with a device id, the words between "Polar" and the id ("Polar GritX
    /// Pro AA123459" → `GritX Pro`); nil for any other name.
    public static func model(inName name: String) -> String? {
        guard DeviceIdentity.polarDeviceID(inName: name) != nil else { return nil }
        return name.split(separator: " ").dropFirst().dropLast().joined(separator: " ")
    }

    /// A simulated strap's advertisement: device `n` is "Polar H10 0000000n" at a steady address,
    /// its heart rate drifting around 60 + 5n, a new value (frame counter advanced) every
    /// ``simulatedAdvertisementsPerValue`` ticks, as a strap repeats each value in several
    /// advertisements.
    public static func simulated(device: Int, tick advertisement: Int, at date: Date) -> Advertisement {
        let tick = advertisement / simulatedAdvertisementsPerValue
        let heartRate = UInt8(clamping: 60 + 5 * device + (tick % 20 < 10 ? tick % 10 : 10 - tick % 10))
        // Status: battery ok (bit 0), contact (bit 1), frame counter (bits 2-4).
        let status = UInt8(0x03 | ((tick % 8) << 2))
        let suffix = String(device, radix: 16, uppercase: true)
        let id = String(repeating: "0", count: max(0, 8 - suffix.count)) + suffix
        let low = String(device % 256, radix: 16, uppercase: true)
        return Advertisement(
            address: "A0:9E:1A:00:00:" + (low.count == 1 ? "0" + low : low), name: "Polar H10 \(id)", rssi: -60,
            manufacturerData: [PolarBroadcastDecoder.companyIdentifier: [status, 0x00, heartRate, heartRate]],
            receivedAt: date)
    }
}

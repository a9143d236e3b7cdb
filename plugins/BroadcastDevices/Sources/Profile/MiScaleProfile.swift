public import BLEAdvertisementKit
public import BLETransport
public import FoundationEssentials

/// Xiaomi's Mi Smart Scale 2 (service data 0x181D) and Mi Body Composition Scale 2 (0x181B): each
/// weighing is repeated in many advertisements. A scale is its address.
public enum MiScaleProfile: AdvertisementProfile {
    /// For logs and status.
    public static let displayName = "Xiaomi scale"
    /// Service data 0x181D or 0x181B.
    public static let matches: [AdvertisementMatch] = MiScaleService.allCases.map { .serviceData(BluetoothUUID($0.rawValue)) }
    /// A weighing is repeated for seconds: any rate will do.
    public static let requiredRate: Double? = nil

    /// The scale's reading (the body composition scale's when both are present).
    public static func decode(_ advertisement: Advertisement) throws(AdvertisementDecodingError) -> MiScaleReading? {
        for service in [MiScaleService.bodyComposition, .weightScale] {
            if let data = advertisement.serviceData[BluetoothUUID(service.rawValue)] {
                return try MiScaleDecoder.decode(data, service: service)
            }
        }
        return nil
    }

    /// A simulated body composition scale: device `n` weighs a person of 70 + n kg once a
    /// minute (60 ticks): 5 ticks measuring, 20 stabilised with the impedance, 10 stepped off,
    /// then idle at 0; its clock set to 2026-01-01 plus the weighing number in minutes.
    public static func simulated(device: Int, tick: Int, at date: Date) -> Advertisement {
        let weighing = tick / 60, phase = tick % 60
        let kilograms = phase < 35 ? 70.0 + Double(device) + Double(weighing % 5) * 0.1 : 0
        let raw = UInt16(kilograms * 200)
        var control: UInt8 = 0x04
        if phase >= 5, phase < 35 { control |= 0x20 | 0x02 }
        if phase >= 25 { control |= 0x80 }
        let minute = weighing % 60, hour = weighing / 60 % 24
        let impedance: UInt16 = control & 0x02 != 0 ? 480 + UInt16(device) : 0
        let bytes: [UInt8] = [
            0x02, control, 0xEA, 0x07, 1, 1, UInt8(hour), UInt8(minute), 0, UInt8(impedance & 0xFF), UInt8(impedance >> 8),
            UInt8(raw & 0xFF), UInt8(raw >> 8),
        ]
        let low = String(device % 256, radix: 16, uppercase: true)
        return Advertisement(
            address: "C8:47:8C:00:00:" + (low.count == 1 ? "0" + low : low), name: "MIBFS", rssi: -70,
            serviceData: [BluetoothUUID(MiScaleService.bodyComposition.rawValue): bytes], receivedAt: date)
    }
}

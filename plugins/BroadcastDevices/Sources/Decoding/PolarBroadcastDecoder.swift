/// The heart-rate block of a Polar sensor's manufacturer data (company 0x006B), as Polar's BLE
/// SDK reads it (polar-ble-sdk, `BlePolarHrAdvertisement` in the Android and iOS sources).
public struct PolarHeartRateBlock: Sendable, Equatable {
    /// The 3-bit frame counter (0–7): it advances when the sensor has a new heart-rate value,
    /// so a repeated advertisement carries the same counter.
    public let frameCounter: UInt8
    /// Whether the sensor has skin contact (bit 1 of the status byte).
    public let sensorContact: Bool
    /// Bit 0 of the status byte: Polar's public API reports it as `batteryStatus`, "false if
    /// the battery needs to be replaced or recharged" (`PolarHrBroadcastData`).
    public let batteryOk: Bool
    /// The heart rate averaged over a short window, in beats per minute (in the 3-byte legacy
    /// form, the one heart rate it carries, as Polar's SDK reports it).
    public let fastAverageHeartRate: Int
    /// The heart rate averaged over a longer window, in beats per minute: the value Polar's SDK
    /// shows (`hrForDisplay`).
    public let slowAverageHeartRate: Int
    /// The 5 kHz code byte (the analogue transmitter's code).
    public let khzCode: UInt8
    /// Whether the block was the 3-byte legacy form (status, kHz code, heart rate) of the H7.
    public let isLegacy: Bool
}

/// Polar's manufacturer data, decoded: the heart-rate block, if the payload has one.
public struct PolarBroadcast: Sendable, Equatable {
    /// The heart-rate block (the last, when there are several); nil when the payload only
    /// carries blocks of other data.
    public let heartRate: PolarHeartRateBlock?
    /// How many blocks of other data (Polar's protobuf data) were skipped.
    public let otherBlocks: Int
}

/// Decodes Polar's manufacturer-specific data (the bytes after the company id 0x006B), as
/// Polar's SDK splits it into blocks (`BleAdvertisementContent.processAdvManufacturerData`):
///
/// - a block whose first byte has bit 6 (0x40, the data-type bit) clear is a heart-rate
///   block: a status byte (bit 0 battery, bit 1 sensor contact, bits 2–4 the frame counter,
///   bit 5 the broadcast bit, bit 7 a status flag), the kHz code, the fast average and the
///   slow average heart rate; when only 3 bytes remain it is the legacy form whose third byte
///   is the heart rate;
/// - a block whose first byte has bit 6 set is other data: its second byte is the length of
///   the data that follows, and the block is skipped by it.
///
/// Pure: no I/O, no state. Throws ``AdvertisementDecodingError`` (`truncated`) when the data
/// ends inside a block.
public enum PolarBroadcastDecoder {
    /// Polar Electro Oy's Bluetooth SIG company identifier.
    public static let companyIdentifier: UInt16 = 0x006B
    static let payloadName = "Polar manufacturer data (0x006B)"

    /// Decodes `bytes`, the manufacturer data after the company id.
    public static func decode(_ bytes: [UInt8]) throws(AdvertisementDecodingError) -> PolarBroadcast {
        var offset = 0
        var heartRate: PolarHeartRateBlock?
        var otherBlocks = 0
        while offset < bytes.count {
            let first = bytes[offset]
            if first & 0x40 == 0 {
                let block = try decodeHeartRateBlock(Array(bytes[offset...]), at: offset)
                heartRate = block
                offset += block.isLegacy ? 3 : 4
            } else {
                guard offset + 1 < bytes.count else {
                    throw truncated(at: offset, "a data block's length byte is missing")
                }
                let length = Int(bytes[offset + 1])
                let end = offset + 2 + length
                guard end <= bytes.count else {
                    throw truncated(
                        at: offset, "a data block of \(length) bytes has only \(bytes.count - offset - 2)")
                }
                otherBlocks += 1
                offset = end
            }
        }
        return PolarBroadcast(heartRate: heartRate, otherBlocks: otherBlocks)
    }

    /// Decodes one heart-rate block: the 4-byte form when at least 4 bytes are given (bytes
    /// after the fourth belong to later blocks), else the 3-byte legacy form.
    /// - Parameter offset: where the block starts in its payload, for the error.
    public static func decodeHeartRateBlock(
        _ bytes: [UInt8], at offset: Int = 0
    ) throws(AdvertisementDecodingError) -> PolarHeartRateBlock {
        guard bytes.count >= 3 else {
            throw truncated(at: offset, "a heart-rate block needs 3 or 4 bytes, \(bytes.count) remain")
        }
        let status = bytes[0]
        let legacy = bytes.count == 3
        let fast = Int(bytes[2])
        return PolarHeartRateBlock(
            frameCounter: (status & 0x1C) >> 2, sensorContact: status & 0x02 != 0, batteryOk: status & 0x01 != 0,
            fastAverageHeartRate: fast, slowAverageHeartRate: legacy ? fast : Int(bytes[3]), khzCode: bytes[1],
            isLegacy: legacy)
    }

    static func truncated(at offset: Int, _ reason: String) -> AdvertisementDecodingError {
        AdvertisementDecodingError(payload: payloadName, code: .truncated, offset: offset, reason: "truncated: \(reason)")
    }
}

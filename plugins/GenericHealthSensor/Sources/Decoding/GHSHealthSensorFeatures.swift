public import GATTDecoding

/// Health Sensor Features (0x2BF3): the observation types the sensor supports and, optionally,
/// the device specializations (IEEE 11073-104xx) it follows.
///
/// Sent as flags (uint8; bit 0: specializations present, bits 1–7 reserved), a count (uint8)
/// and that many observation types (uint32 MDC codes), then, when bit 0 is set, a count (uint8)
/// and that many specializations (``GHSDeviceSpecialization``, three bytes each).
public struct GHSHealthSensorFeatures: Hashable, Sendable {
    /// The MDC codes of the observation types the sensor supports.
    public var supportedObservationTypes: [UInt32]
    /// The device specializations, nil when the flags say none are sent.
    public var deviceSpecializations: [GHSDeviceSpecialization]?

    /// Features from their parts.
    public init(supportedObservationTypes: [UInt32], deviceSpecializations: [GHSDeviceSpecialization]? = nil) {
        self.supportedObservationTypes = supportedObservationTypes
        self.deviceSpecializations = deviceSpecializations
    }

    /// Decodes the characteristic's value.
    /// - Throws: `.reservedValue` for a reserved flag bit, `.truncated` when the value ends
    ///   inside a list, `.unexpectedLength` for bytes after it.
    public static func decode(_ bytes: [UInt8]) throws(GHSDecodingError) -> GHSHealthSensorFeatures {
        var reader = GATTPayloadReader(bytes, GHSCharacteristic.healthSensorFeatures)
        let flags = try reader.uint8("flags")
        guard flags & 0xFE == 0 else {
            throw GHSDecodingError(
                .reservedValue, characteristic: .healthSensorFeatures, field: "flags", offset: 0, needed: 1,
                available: bytes.count, value: Int(flags))
        }
        let types = try reader.uint32List("supportedObservationTypes")
        var specializations: [GHSDeviceSpecialization]?
        if flags & 0x01 != 0 {
            let count = try reader.count("deviceSpecializations", itemSize: 3)
            var list: [GHSDeviceSpecialization] = []
            list.reserveCapacity(count)
            for _ in 0..<count {
                let code = try reader.uint16("deviceSpecializations.code")
                list.append(GHSDeviceSpecialization(termCode: code, version: try reader.uint8("deviceSpecializations.version")))
            }
            specializations = list
        }
        try reader.expectEnd()
        return GHSHealthSensorFeatures(supportedObservationTypes: types, deviceSpecializations: specializations)
    }
}

/// A device specialization the sensor follows: the term code of an MDC_DEV_SPEC_PROFILE_* code
/// in partition 8 (MDC_PART_INFRA), and its version. The blood pressure monitor's is term code
/// 4103 (0x1007), MDC code 528391; STMicroelectronics and Philips send it as 07 10 01 (version 1).
public struct GHSDeviceSpecialization: Hashable, Sendable, CustomStringConvertible {
    /// The term code within partition 8 (uint16 as sent).
    public var termCode: UInt16
    /// The specialization's version.
    public var version: UInt8

    /// A specialization from its parts.
    public init(termCode: UInt16, version: UInt8) {
        self.termCode = termCode
        self.version = version
    }

    /// The full MDC code: partition 8 × 65536 + term code.
    public var mdcCode: UInt32 { 8 << 16 | UInt32(termCode) }

    /// The MDC code and the version, for logs and metadata: `528391 version 1`.
    public var description: String { "\(mdcCode) version \(version)" }
}

/// An IEEE 11073-20601 number as the health profiles send it: 16-bit SFLOAT (4-bit exponent,
/// 12-bit mantissa) or 32-bit FLOAT (8-bit exponent, 24-bit mantissa), both base 10 and two's
/// complement, value = mantissa × 10^exponent.
///
/// Five mantissas with exponent 0 are not numbers (IEEE 11073-20601 §F.8, repeated in the
/// Personal Health Devices Transcoding white paper): NaN, NRes (not at this resolution),
/// +INFINITY, -INFINITY and one reserved value. They are kept as what they are, never as a
/// number, so a sink never stores them.
public enum MedicalFloat: Hashable, Sendable, CustomStringConvertible {
    case value(Double)
    case notANumber
    case notAtThisResolution
    case positiveInfinity
    case negativeInfinity
    case reserved

    /// The number, or nil for a special value.
    public var number: Double? {
        if case .value(let number) = self { number } else { nil }
    }

    public var description: String {
        switch self {
        case .value(let number): "\(number)"
        case .notANumber: "NaN"
        case .notAtThisResolution: "NRes"
        case .positiveInfinity: "+INFINITY"
        case .negativeInfinity: "-INFINITY"
        case .reserved: "reserved"
        }
    }

    /// Decodes a 16-bit SFLOAT.
    public static func sfloat(_ raw: UInt16) -> MedicalFloat {
        switch raw {
        case 0x07FF: return .notANumber
        case 0x0800: return .notAtThisResolution
        case 0x07FE: return .positiveInfinity
        case 0x0802: return .negativeInfinity
        case 0x0801: return .reserved
        default:
            let mantissa = Int32(bitPattern: UInt32(raw & 0x0FFF) << 20) >> 20
            let exponent = Int32(Int8(bitPattern: UInt8(raw >> 12) << 4) >> 4)
            return .value(scaled(mantissa, exponent))
        }
    }

    /// Decodes a 32-bit FLOAT.
    public static func float(_ raw: UInt32) -> MedicalFloat {
        switch raw {
        case 0x007F_FFFF: return .notANumber
        case 0x0080_0000: return .notAtThisResolution
        case 0x007F_FFFE: return .positiveInfinity
        case 0x0080_0002: return .negativeInfinity
        case 0x0080_0001: return .reserved
        default:
            let mantissa = Int32(bitPattern: (raw & 0x00FF_FFFF) << 8) >> 8
            let exponent = Int32(Int8(bitPattern: UInt8(raw >> 24)))
            return .value(scaled(mantissa, exponent))
        }
    }

    /// mantissa × 10^exponent, dividing for negative exponents so that 3760 × 10^-2 is 37.6
    /// exactly as a Double can hold it (multiplying by 0.01 gives 37.6000000000000014).
    private static func scaled(_ mantissa: Int32, _ exponent: Int32) -> Double {
        var power = 1.0
        for _ in 0..<abs(exponent) { power *= 10 }
        return exponent < 0 ? Double(mantissa) / power : Double(mantissa) * power
    }
}

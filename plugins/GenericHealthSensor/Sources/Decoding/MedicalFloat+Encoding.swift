public import GATTDecoding

extension MedicalFloat {
    /// The 32-bit IEEE 11073-20601 FLOAT that decodes to this value: special values as their
    /// reserved mantissas, a number with the shortest mantissa that holds it exactly, else the
    /// most precise that fits 24 bits (rounded). Numbers beyond what a FLOAT holds become
    /// ±INFINITY, and a Double NaN becomes NaN.
    public var floatBits: UInt32 {
        switch self {
        case .notANumber: return 0x007F_FFFF
        case .notAtThisResolution: return 0x0080_0000
        case .positiveInfinity: return 0x007F_FFFE
        case .negativeInfinity: return 0x0080_0002
        case .reserved: return 0x0080_0001
        case .value(let number):
            guard !number.isNaN else { return 0x007F_FFFF }
            guard number.isFinite else { return number > 0 ? 0x007F_FFFE : 0x0080_0002 }
            if number == 0 { return 0 }
            // The mantissa's range without the special values' (±(2^23 − 3)).
            let largest = Double(0x7F_FFFD)
            func candidate(_ exponent: Int) -> UInt32? {
                var power = 1.0
                for _ in 0..<abs(exponent) { power *= 10 }
                let mantissa = (exponent < 0 ? number * power : number / power).rounded()
                guard abs(mantissa) <= largest else { return nil }
                return UInt32(bitPattern: Int32(exponent)) << 24 | UInt32(bitPattern: Int32(mantissa)) & 0x00FF_FFFF
            }
            let exponents = Array(-20...20)
            for exponent in exponents.reversed() {
                if let bits = candidate(exponent), MedicalFloat.float(bits) == self { return bits }
            }
            for exponent in exponents {
                if let bits = candidate(exponent) { return bits }
            }
            return number > 0 ? 0x007F_FFFE : 0x0080_0002
        }
    }

    /// ``floatBits`` as the four bytes sent, least significant first.
    var floatBytes: [UInt8] { GHSEncoding.littleEndian(floatBits) }
}

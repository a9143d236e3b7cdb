/// The CGM service's optional end-to-end check (CGMS 1.0.1 §2.2): a CRC-16 over the value's
/// other octets, sent least significant octet first as its last two. The CRC is CRC-16/MCRF4XX
/// (the CCITT polynomial x¹⁶+x¹²+x⁵+1, reflected, initial value 0xFFFF, no final XOR): the
/// catalogue's check value, of the ASCII "123456789", is 0x6F91.
public enum E2ECRC {
    /// The CRC of `bytes`.
    public static func compute<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x8408 : crc >> 1 }
        }
        return crc
    }

    /// `bytes` with their CRC appended, as a collector writes a control point of a sensor that
    /// supports E2E-CRC.
    public static func appending(to bytes: [UInt8]) -> [UInt8] {
        let crc = compute(bytes)
        return bytes + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }
}

/// What a value's E2E-CRC says.
public enum E2EVerdict: Hashable, Sendable, CustomStringConvertible {
    /// The value carries none.
    case absent
    /// It carries one and it matches the other octets.
    case valid
    /// It carries one that does not match: the value was changed on its way and is not used.
    case mismatch(sent: UInt16, computed: UInt16)

    /// The verdict of the CRC `sent` over `bytes`.
    public init<Bytes: Collection<UInt8>>(sent: UInt16, over bytes: Bytes) {
        let computed = E2ECRC.compute(bytes)
        self = sent == computed ? .valid : .mismatch(sent: sent, computed: computed)
    }

    /// `absent`, `valid` or `mismatch`, as `healthgate decode` prints it.
    public var name: String {
        switch self {
        case .absent: "absent"
        case .valid: "valid"
        case .mismatch: "mismatch"
        }
    }

    public var description: String {
        switch self {
        case .absent, .valid: name
        case .mismatch(let sent, let computed):
            "mismatch (sent 0x\(String(sent, radix: 16, uppercase: true)), computed 0x\(String(computed, radix: 16, uppercase: true)))"
        }
    }
}

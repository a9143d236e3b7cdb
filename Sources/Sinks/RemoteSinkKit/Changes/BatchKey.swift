import HealthModel

/// Batch identities. A key names one payload: it is the digest of everything a receiver builds
/// its request from, the receiver's payload identity (its format and the options that shape the
/// bytes, ``RemoteReceiver/payloadIdentity``) and, in order, each change's anchor, uuid and kind
/// of change. An anchor names one version of one object (the store hands out a new anchor for
/// every version and never reuses one), so the changes fix the records a request carries and
/// the payload identity fixes how they are written.
///
/// Two independent 64-bit FNV-1a digests, finalised with splitmix64: a de-duplication key, not a
/// cryptographic hash. The uuids make it unique across gateways, the anchors tell two versions
/// of one object apart.
public enum BatchKey {
    /// The key of a request carrying `changes` in that order, written as `payloadIdentity` says:
    /// `hg2-` and 32 hex digits.
    public static func key(for changes: [FollowedChange], payloadIdentity: String) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        func absorb(byte: UInt64) {
            first = (first ^ byte) &* 0x0000_0100_0000_01B3
            second = (second ^ (byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
        }
        func absorb(_ word: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) { absorb(byte: (word >> UInt64(shift)) & 0xFF) }
        }
        // Its length first, so that no identity's bytes can pass for the start of the changes.
        let identity = Array(payloadIdentity.utf8)
        absorb(UInt64(identity.count))
        for byte in identity { absorb(byte: UInt64(byte)) }
        for change in changes {
            absorb(UInt64(bitPattern: change.anchor) << 1 | (change.isDeletion ? 1 : 0))
            let id = change.id
            absorb(id.high)
            absorb(id.low)
        }
        func mix(_ value: UInt64) -> UInt64 {
            var z = value &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return "hg2-" + hex(mix(first ^ UInt64(changes.count))) + hex(mix(second))
    }
}

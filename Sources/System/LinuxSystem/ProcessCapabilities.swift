/// The Linux capabilities the process holds, as the kernel reports them (capabilities(7)).
///
/// Read from the `CapEff` line of `/proc/self/status` (proc(5): the effective set, a 64-bit
/// mask in hexadecimal), not guessed from the user id: a service user given
/// `AmbientCapabilities=` holds them, and root in a unit with an empty `CapabilityBoundingSet=`
/// does not.
public struct ProcessCapabilities: Sendable, Hashable {
    /// The effective set, bit N for capability N.
    public let effective: UInt64

    /// `CAP_NET_ADMIN` (include/uapi/linux/capability.h: 12).
    public static let netAdmin = 12

    /// A set with mask `effective`.
    public init(effective: UInt64) {
        self.effective = effective
    }

    /// Whether capability number `capability` is in the effective set.
    public func holds(_ capability: Int) -> Bool {
        guard (0..<64).contains(capability) else { return false }
        return effective & (1 << UInt64(capability)) != 0
    }

    /// The set a `/proc/<pid>/status` text gives; nil when it has no well-formed `CapEff` line.
    public init?(status text: String) {
        for line in text.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let value = line.dropFirst("CapEff:".count).drop(while: { $0 == " " || $0 == "\t" })
            guard !value.isEmpty, value.count <= 16, let mask = UInt64(value, radix: 16) else { return nil }
            self.init(effective: mask)
            return
        }
        return nil
    }

    /// The calling process's capabilities, read from `/proc/self/status`.
    /// - Throws: ``SystemError`` when the file cannot be read (`ENOENT` without /proc), or
    ///   `EINVAL` when it has no `CapEff` line.
    public static func current() throws(SystemError) -> ProcessCapabilities {
        let path = "/proc/self/status"
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.contents(of: path)
        } catch {
            throw SystemError("read", target: path, errno: error)
        }
        guard let capabilities = ProcessCapabilities(status: String(decoding: bytes, as: UTF8.self)) else {
            throw SystemError("parse CapEff", target: path, errno: .invalidArgument)
        }
        return capabilities
    }
}

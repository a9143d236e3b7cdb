import FoundationEssentials
import LinuxSystem

/// The machine's permanent hardware address, for the `fhir-phd` PhgDevice's system identifier
/// (``PHDGatewayFacts``): the MAC of the first network interface, by name, that is an Ethernet
/// or Wi-Fi one (`type` 1, ARPHRD_ETHER) whose address the hardware gave it (`addr_assign_type`
/// 0, NET_ADDR_PERM; a random or set address would name another gateway after a reboot), read
/// from sysfs (`/sys/class/net/<interface>/…`, Documentation/ABI/testing/sysfs-class-net).
enum PermanentHardwareAddress {
    /// The address (`dc:a6:32:12:34:56`), or nil when no interface has one (a container).
    /// Reads a few small sysfs files; an unreadable one rules its interface out.
    static func read(root: String = "/sys/class/net") -> String? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return nil }
        for name in names.sorted() {
            func attribute(_ file: String) -> String? {
                (try? FileSystem.contents(of: FileSystem.join(FileSystem.join(root, name), file)))
                    .map { String(decoding: $0, as: UTF8.self).filter { !$0.isWhitespace } }
            }
            guard attribute("type") == "1", attribute("addr_assign_type") == "0", let address = attribute("address"),
                PHDGatewayFacts.eui48(address) != nil
            else { continue }
            return address
        }
        return nil
    }
}

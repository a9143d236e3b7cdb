import FoundationEssentials
import GatewayRuntime
import LinuxSystem

/// The name of the zone the host lives in, read the way systemd's timedatectl reads it, without
/// loading ICU: `$TZ` when it names a zone, else the target of /etc/localtime below a `zoneinfo`
/// directory, else /etc/timezone (Debian's), else "UTC".
public enum LocalTimeZoneName {
    public static func resolve(
        variables: [String: String], localtime: String = "/etc/localtime", timezoneFile: String = "/etc/timezone"
    ) -> String {
        // POSIX allows a ':' before a zone name; a value with a '/' at its start is a file path.
        if let value = variables["TZ"].map({ $0.hasPrefix(":") ? String($0.dropFirst()) : $0 }),
            !value.isEmpty, !value.hasPrefix("/"), isZoneName(value)
        {
            return value
        }
        // With system calls and byte comparisons rather than FileManager and the standard
        // library's substring search: their code would otherwise stay resident in the gateway
        // for this one call at start-up (Benchmarks/README.md, "memory").
        if let target = try? FileSystem.symbolicLinkTarget(localtime), let name = after("zoneinfo/", in: target),
            isZoneName(name)
        {
            return name
        }
        if let bytes = try? FileSystem.contents(of: timezoneFile) {
            let name = String(decoding: bytes, as: UTF8.self).trimmed()
            if isZoneName(name) { return name }
        }
        return "UTC"
    }

    /// Whether `name` has the shape of a tz database name ("UTC", "Europe/Berlin",
    /// "America/Argentina/Buenos_Aires", "Etc/GMT+5").
    static func isZoneName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return !name.isEmpty && name.count <= 64 && !zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/_+-".contains($0)) }
    }

    /// What follows the first `marker` in `text`, or nil when `text` has none.
    static func after(_ marker: String, in text: String) -> String? {
        let bytes = Array(text.utf8), wanted = Array(marker.utf8)
        guard !wanted.isEmpty, bytes.count >= wanted.count else { return nil }
        for start in 0...(bytes.count - wanted.count) where bytes[start..<(start + wanted.count)].elementsEqual(wanted) {
            return String(decoding: bytes[(start + wanted.count)...], as: UTF8.self)
        }
        return nil
    }
}

import FoundationEssentials
import GatewayRuntime

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
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: localtime),
            let range = target.firstRange(of: "zoneinfo/")
        {
            let name = String(target[range.upperBound...])
            if isZoneName(name) { return name }
        }
        if let data = FileManager.default.contents(atPath: timezoneFile) {
            let name = String(decoding: data, as: UTF8.self).trimmed()
            if isZoneName(name) { return name }
        }
        return "UTC"
    }

    /// Whether `name` has the shape of a tz database name ("UTC", "Europe/Berlin",
    /// "America/Argentina/Buenos_Aires", "Etc/GMT+5").
    static func isZoneName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && !name.contains("..")
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/_+-".contains($0)) }
    }
}

import FoundationEssentials
public import HealthModel

/// Time zones of the tz database by name ("Europe/Berlin"), for the `timeZone` key and the
/// statistics of `healthgate query`, read from the system's copy of the database: `$TZDIR`
/// when set (as libc reads it), else /usr/share/zoneinfo (Debian's `tzdata`).
public enum NamedTimeZone {
    public static let defaultDirectory = "/usr/share/zoneinfo"

    /// The zone named `identifier`, or nil when the database has no such zone. UTC is known
    /// even without the database.
    public static func named(_ identifier: String, variables: [String: String] = [:]) -> ZoneRules? {
        guard LocalTimeZoneName.isZoneName(identifier) else { return nil }
        let directory = variables["TZDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultDirectory
        if let data = FileManager.default.contents(atPath: directory + "/" + identifier),
            let rules = try? ZoneRules(identifier: identifier, tzif: Array(data))
        {
            return rules
        }
        return ["UTC", "Etc/UTC", "GMT", "Etc/GMT", "Zulu", "Etc/Zulu"].contains(identifier) ? .utc : nil
    }
}

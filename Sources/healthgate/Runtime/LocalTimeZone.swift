import Foundation

/// The time zone the gateway lives in, when the configuration or a command names none.
enum LocalTimeZone {
    /// `$TZ` when it names a zone (POSIX allows a ':' before the name), else the system's.
    static func resolve(variables: [String: String]) -> TimeZone {
        if let name = variables["TZ"].map({ $0.hasPrefix(":") ? String($0.dropFirst()) : $0 }),
            let zone = TimeZone(identifier: name)
        {
            return zone
        }
        return TimeZone.current
    }
}

import HealthModel
public import FoundationEssentials
public import RemoteSinkKit
import GatewayRuntime

extension DeliveryPolicy {
    /// The outcome of a request that got no answer (refused connection, timeout, TLS failure):
    /// always worth retrying.
    public static func outcome(of error: HTTPTransportError) -> DeliveryOutcome {
        .retry(reason: error.description, status: nil, retryAfter: nil)
    }

    /// The outcome of an HTTP response received at `now` (RFC 9110 §15 status classes, §10.2.3
    /// Retry-After).
    public func outcome(of response: HTTPResponse, now: Date) -> DeliveryOutcome {
        let status = response.status
        switch status {
        case 200..<300:
            return .delivered
        case 401, 403:
            return .authentication(status: status)
        case 408, 429, 500..<600:
            let retryAfter = response.headers["retry-after"].flatMap { Self.retryAfter($0, now: now) }
                .map { min($0, maximumRetryAfter) }
            return .retry(reason: "HTTP \(status)", status: status, retryAfter: retryAfter)
        case 400..<500:
            return .rejected(status: status, answer: String(decoding: response.body.prefix(4096), as: UTF8.self))
        case 300..<400:
            let location = response.headers["location"].map { " to \($0)" } ?? ""
            return .retry(
                reason: "HTTP \(status) redirect\(location) not followed: only the configured url is contacted",
                status: status, retryAfter: nil)
        default:
            return .retry(reason: "unexpected HTTP \(status)", status: status, retryAfter: nil)
        }
    }

    /// Parses a Retry-After value: delay-seconds or an HTTP-date (IMF-fixdate, and the obsolete
    /// RFC 850 and asctime forms recipients must accept, RFC 9110 §5.6.7). A date in the past
    /// means zero. Returns nil for anything else.
    public static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmed()
        if let seconds = Int64(text) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        guard let date = httpDate(text) else { return nil }
        let seconds = max(0, date.timeIntervalSince(now))
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Parses the three HTTP-date forms; nil for anything else.
    public static func httpDate(_ text: String) -> Date? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let tokens = text.split(whereSeparator: { " ,-:".contains($0) }).map { String($0).lowercased() }
        func month(_ token: String) -> Int64? { months.firstIndex(of: token).map { Int64($0 + 1) } }
        var day: Int64, monthNumber: Int64, year: Int64, hour: Int64, minute: Int64, second: Int64
        if tokens.count == 7, let m = month(tokens[1]) {
            // asctime: Sun Nov  6 08:49:37 1994
            guard let d = Int64(tokens[2]), let h = Int64(tokens[3]), let mi = Int64(tokens[4]),
                let s = Int64(tokens[5]), let y = Int64(tokens[6]) else { return nil }
            (day, monthNumber, year, hour, minute, second) = (d, m, y, h, mi, s)
        } else if tokens.count == 8, tokens[7] == "gmt", let m = month(tokens[2]) {
            // IMF-fixdate (Sun, 06 Nov 1994 08:49:37 GMT) or RFC 850 (Sunday, 06-Nov-94 08:49:37 GMT)
            guard let d = Int64(tokens[1]), var y = Int64(tokens[3]), let h = Int64(tokens[4]),
                let mi = Int64(tokens[5]), let s = Int64(tokens[6]) else { return nil }
            if tokens[3].count == 2 { y += y < 70 ? 2000 : 1900 }
            (day, monthNumber, year, hour, minute, second) = (d, m, y, h, mi, s)
        } else {
            return nil
        }
        guard (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let rfc3339 = String(cFormat: "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", year, monthNumber, day, hour, minute, second)
        return RFC3339.date(from: rfc3339)
    }
}

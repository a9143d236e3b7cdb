/// Hides the credentials of URLs inside free text, so that no message, log line or status
/// report repeats a password from a configuration file.
public enum CredentialRedaction {
    /// `text` with the password of every `scheme://user:password@host` replaced by `***`
    /// (`ftp://user:***@host/x`), and a user-only userinfo (`scheme://token@host`, which is how
    /// tokens are often passed) replaced by `***`.
    public static func redact(_ text: String) -> String {
        // Only a text with "://" has anything to redact. Searched in its bytes rather than with
        // `contains(_:)`: the standard library's substring search lives in _StringProcessing, a
        // section of code the gateway then keeps resident for this one call (Benchmarks/README.md,
        // "memory").
        let bytes = text.utf8
        guard zip(bytes, zip(bytes.dropFirst(), bytes.dropFirst(2))).contains(where: {
            $0 == UInt8(ascii: ":") && $1.0 == UInt8(ascii: "/") && $1.1 == UInt8(ascii: "/")
        }) else { return text }
        var scalars = Array(text.unicodeScalars)
        var index = 0
        while index + 2 < scalars.count {
            guard scalars[index] == ":", scalars[index + 1] == "/", scalars[index + 2] == "/" else {
                index += 1
                continue
            }
            let authorityStart = index + 3
            var end = authorityStart
            var at: Int?
            while end < scalars.count, !terminators.contains(scalars[end]) {
                if scalars[end] == "@" { at = end }
                end += 1
            }
            guard let at else {
                index = end
                continue
            }
            let userinfo = scalars[authorityStart..<at]
            let replacement: [Unicode.Scalar]
            if let colon = userinfo.firstIndex(of: ":") {
                replacement = Array(scalars[authorityStart..<colon]) + Array(":***".unicodeScalars)
            } else {
                replacement = Array("***".unicodeScalars)
            }
            scalars.replaceSubrange(authorityStart..<at, with: replacement)
            index = authorityStart + replacement.count + 1
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars)
        return String(result)
    }

    /// Where an authority ends: a path, query or fragment, whitespace, or a quote around the URL.
    private static let terminators: Set<Unicode.Scalar> = ["/", "?", "#", " ", "\t", "\n", "\"", "'", ">", ")", ","]
}

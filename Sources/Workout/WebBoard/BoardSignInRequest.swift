import FoundationEssentials
import GatewayRuntime

/// A sign-in posted from the board's page (`POST /api/sign-in`): checked before anything is
/// assigned. A value with no I/O: the server hands it the request's headers and body, and it
/// answers the sign-in to make or the specific refusal.
///
/// **Safety.** The board has no log-in beyond its token, so a sign-in is accepted only when the
/// request is the board's own page talking to the address the board listens on:
/// - `Host` must name the configured listen address and the bound port (`localhost` too for a
///   loopback address; any IPv4 literal when listening on 0.0.0.0), never a name, so that a
///   page on another site whose name resolves to this machine (DNS rebinding) is refused;
/// - `Origin` must be present and be `http://` + that `Host`: a page of another origin cannot
///   post (browsers send `Origin` with every POST), and a client that is no browser must say it;
/// - the body must be `application/json`, which a form on another site cannot send without a
///   CORS preflight that the board never answers;
/// - the body is one JSON object, at most ``maximumBodyBytes``, with exactly the keys `strap`
///   (1 to 64 characters), `participant` (1 to 64 characters) and optionally `keep` (a boolean).
/// The token, when configured, is checked before (as for every request).
struct BoardSignInRequest: Hashable, Sendable {
    /// The strap's identity, as `participant assign` takes it.
    var strap: String
    /// The participant's name (an existing one, or a new member's).
    var participant: String
    /// Keep the assignment after the class.
    var keep: Bool

    /// The largest body read.
    static let maximumBodyBytes = 4096

    /// A refused request: its HTTP status and what it says.
    struct Refusal: Error, Hashable, Sendable {
        var status: Int
        var message: String
    }

    /// The request's headers, as the server reads them (nil: absent).
    struct Headers: Hashable, Sendable {
        var host: String?
        var origin: String?
        var contentType: String?
    }

    /// Checks a request's headers against the listen address and its bound `port` (the
    /// configured one, or the chosen one for port 0).
    static func checkHeaders(_ headers: Headers, listen: ListenAddress, port: UInt16) throws(Refusal) {
        guard let host = headers.host, !host.isEmpty else { throw Refusal(status: 403, message: "sign-in refused: no Host header") }
        guard Self.hostIsBoard(host, listen: listen, port: port) else {
            throw Refusal(status: 403, message: "sign-in refused: Host \(host) is not the board's address (\(listen.octets.map(String.init).joined(separator: ".")):\(port))")
        }
        guard let origin = headers.origin else {
            throw Refusal(status: 403, message: "sign-in refused: no Origin header (send Origin: http://\(host))")
        }
        guard origin == "http://\(host)" else {
            throw Refusal(status: 403, message: "sign-in refused: Origin \(origin) is not the board's (http://\(host))")
        }
        let type = headers.contentType?.split(separator: ";").first.map { $0.trimmed().lowercased() }
        guard type == "application/json" else {
            throw Refusal(status: 415, message: "sign-in refused: the body must be application/json")
        }
    }

    /// Whether `host` (`HOST:PORT`) names the board: its port, and its address (or `localhost`
    /// for loopback; any IPv4 literal for 0.0.0.0).
    static func hostIsBoard(_ host: String, listen: ListenAddress, port: UInt16) -> Bool {
        guard let colon = host.lastIndex(of: ":"), UInt16(host[host.index(after: colon)...]) == port else { return false }
        let name = String(host[..<colon])
        let literal = (try? ListenAddress(parsing: "\(name):0"))?.octets
        if listen.octets == [0, 0, 0, 0] { return literal != nil && name != "localhost" }
        if literal == listen.octets && name != "localhost" { return true }
        return listen.isLoopback && name.lowercased() == "localhost"
    }

    /// Decodes a body.
    /// - Throws: ``Refusal`` (400 or 413) naming what is wrong: not JSON, not an object, a key
    ///   missing, unknown or of the wrong type, a value empty or too long.
    static func decode(_ body: [UInt8]) throws(Refusal) -> BoardSignInRequest {
        guard body.count <= maximumBodyBytes else {
            throw Refusal(status: 413, message: "sign-in refused: the body is larger than \(maximumBodyBytes) bytes")
        }
        let value: JSONValue
        do {
            value = try ConfigurationJSONParser.parse(body)
        } catch {
            throw Refusal(status: 400, message: "sign-in refused: the body is not JSON (\(error))")
        }
        guard case .object(let object) = value else {
            throw Refusal(status: 400, message: "sign-in refused: the body must be a JSON object with strap and participant")
        }
        if let unknown = object.keys.sorted().first(where: { !["strap", "participant", "keep"].contains($0) }) {
            throw Refusal(status: 400, message: "sign-in refused: unknown key \"\(unknown)\" (strap, participant, keep)")
        }
        func text(_ key: String, _ what: String) throws(Refusal) -> String {
            guard let entry = object[key] else { throw Refusal(status: 400, message: "sign-in refused: \(key) is missing (\(what))") }
            guard case .string(let raw) = entry else { throw Refusal(status: 400, message: "sign-in refused: \(key) must be a string") }
            let text = raw.trimmed()
            guard !text.isEmpty, text.count <= 64 else {
                throw Refusal(status: 400, message: "sign-in refused: \(key) must be 1 to 64 characters")
            }
            guard !text.contains(where: { $0.isNewline || ($0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) }) else {
                throw Refusal(status: 400, message: "sign-in refused: \(key) must not contain control characters")
            }
            return text
        }
        let strap = try text("strap", "the strap's identity")
        let participant = try text("participant", "a participant's or a new member's name")
        let keep: Bool
        switch object["keep"] {
        case nil, .null?: keep = false
        case .bool(let value)?: keep = value
        default: throw Refusal(status: 400, message: "sign-in refused: keep must be true or false")
        }
        return BoardSignInRequest(strap: strap, participant: participant, keep: keep)
    }
}

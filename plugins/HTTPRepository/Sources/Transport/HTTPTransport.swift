public import FoundationEssentials

/// One request to the repository: a POST of a batch, or (Open mHealth) a DELETE of a data point.
public struct HTTPRequest: Sendable {
    /// `POST` or `DELETE`.
    public var method: String
    public var url: URL
    /// Header fields in order. Values may hold secrets (Authorization): never log them.
    public var headers: [(name: String, value: String)]
    public var body: Data
    public var timeout: Double

    public init(method: String = "POST", url: URL, headers: [(name: String, value: String)], body: Data, timeout: Double) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// The repository's answer.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    /// Header fields with lower-cased names.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A request that got no HTTP answer: refused connection, DNS failure, timeout, TLS failure.
public struct HTTPTransportError: Error, Sendable, CustomStringConvertible {
    /// The endpoint (never carries credentials: the configuration refuses them in the URL).
    public var url: String
    public var reason: String
    /// Whether the request timed out.
    public var isTimeout: Bool
    public var method: String

    public init(url: String, reason: String, isTimeout: Bool = false, method: String = "POST") {
        self.url = url
        self.reason = reason
        self.isTimeout = isTimeout
        self.method = method
    }

    public var description: String { "\(method) \(url) failed: \(reason)" }
}

/// Sends requests; injected so tests can count or fail them. Implementations must be thread-safe.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status.
    /// - Throws: ``HTTPTransportError`` when no answer came; `CancellationError` when cancelled.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse

    /// Readies the transport for its first request. The sink calls it when it starts, so that a
    /// transport that cannot work (``CurlTransport`` without libcurl) is reported at once, not
    /// only when the first record is sent. The default does nothing.
    /// - Throws: why the transport cannot send anything now.
    func prepare() async throws
}

extension HTTPTransport {
    /// Does nothing: the transport needs no preparation.
    public func prepare() async throws {}
}

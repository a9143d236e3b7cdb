public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// One POST to the repository.
public struct HTTPRequest: Sendable {
    public var url: URL
    /// Header fields in order. Values may hold secrets (Authorization): never log them.
    public var headers: [(name: String, value: String)]
    public var body: Data
    public var timeout: Double

    public init(url: URL, headers: [(name: String, value: String)], body: Data, timeout: Double) {
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

    public init(url: String, reason: String, isTimeout: Bool = false) {
        self.url = url
        self.reason = reason
        self.isTimeout = isTimeout
    }

    public var description: String { "POST \(url) failed: \(reason)" }
}

/// Sends requests; injected so tests can count or fail them. Implementations must be thread-safe.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the answer, whatever its status.
    /// - Throws: ``HTTPTransportError`` when no answer came; `CancellationError` when cancelled.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// The real transport: FoundationNetworking's URLSession (libcurl underneath).
///
/// Certificates are verified against the system store (libcurl's default CA bundle). Redirects
/// are never followed: the delegate answers every redirect with nil, so the 3xx response itself
/// comes back and the sink reports it, and no request reaches any URL but the configured one.
/// No cookies, no cache, no credential storage.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = "POST"
        for header in request.headers {
            urlRequest.addValue(header.value, forHTTPHeaderField: header.name)
        }
        urlRequest.httpBody = request.body
        let url = request.url.absoluteString
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        let nsError = error as NSError
                        if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled {
                            continuation.resume(throwing: CancellationError())
                        } else {
                            continuation.resume(throwing: HTTPTransportError(
                                url: url, reason: nsError.localizedDescription,
                                isTimeout: nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorTimedOut))
                        }
                        return
                    }
                    guard let http = response as? HTTPURLResponse else {
                        continuation.resume(throwing: HTTPTransportError(url: url, reason: "the answer was not HTTP"))
                        return
                    }
                    var headers: [String: String] = [:]
                    for (name, value) in http.allHeaderFields {
                        if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                    }
                    continuation.resume(returning: HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// Holds the running task so that cancellation can reach it.
private final class TaskBox: @unchecked Sendable {
    // Guarded by `lock`; URLSessionTask.cancel is thread-safe.
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var cancelled = false

    func set(_ task: URLSessionTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        if cancelled { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}

/// Refuses every redirect: the repository URL is the only one contacted.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // Stateless, so sharing it across URLSession's delegate queue is safe.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

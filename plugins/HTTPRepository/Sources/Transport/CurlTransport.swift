import LinuxSystem
internal import CCurl
import AsyncPrimitives
import FoundationEssentials
import Synchronization
import GatewayRuntime

/// The real transport: libcurl's easy interface, through a ``CurlLibrary`` loaded at run time.
///
/// Why libcurl directly and not URLSession: FoundationNetworking on Linux gives no way to trust a
/// custom CA (it sets `CURLOPT_CAINFO` only from its built-in list of system bundles), and this
/// sink must accept a private repository's CA file. libcurl is what URLSession uses underneath.
///
/// - libcurl is loaded by ``prepare()`` (the sink calls it when it starts) or by the first
///   ``send(_:)``, never at process start. When it cannot be loaded, `prepare` throws
///   ``NativeLibraryError`` and `send` throws ``HTTPTransportError`` carrying the same text.
/// - Certificates and host names are always verified (`CURLOPT_SSL_VERIFYPEER`/`VERIFYHOST`);
///   `caFile` replaces the system bundle as the set of trusted roots.
/// - Redirects are never followed and only `http`/`https` are allowed, so no request reaches any
///   URL but the configured one.
/// - The transport is an actor whose executor is a serial Dispatch queue, so each request runs
///   on that queue (`curl_easy_perform` blocks), never on the cooperative pool; concurrent sends
///   take turns. Cancelling the calling task aborts the transfer from libcurl's progress
///   callback.
/// - One easy handle serves every request, so libcurl keeps the connection open between them
///   (HTTP/1.1 keep-alive, and the TLS session): a batch does not pay for a new TCP and TLS
///   handshake. Every option is set again for each request.
public actor CurlTransport: HTTPTransport {
    private let library: CurlLibrary
    private let caFile: String?
    private let executor = QueueExecutor(label: "healthgate.http-repository.curl")
    /// The easy handle kept between requests, and the cleanup function of the library that made
    /// it (the library outlives the handle: it is a stored property freed after `deinit`).
    private var easy: EasyHandle?

    /// Every isolated method runs on the transport's queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Creates a transport. Loads nothing: see ``prepare()``.
    /// - Parameters:
    ///   - library: libcurl, loaded on first use. The default is an unloaded `libcurl.so.4`.
    ///   - caFile: a PEM bundle of trusted root certificates; nil trusts the system store.
    public init(library: CurlLibrary = CurlLibrary(), caFile: String? = nil) {
        self.library = library
        self.caFile = caFile
    }

    /// Loads libcurl, on this transport's queue (dlopen reads files), unless it is loaded already.
    /// - Throws: ``NativeLibraryError`` when libcurl is missing or unusable.
    public func prepare() async throws {
        try library.load()
    }

    /// Frees the reused handle. No transfer can be running: a transfer holds the actor, and the
    /// last reference is gone, so the handle is used nowhere else (a nonisolated deinit: Swift
    /// 6.0.3, Debian 13's toolchain, has no `isolated deinit`).
    deinit {
        if let easy { easy.cleanup(easy.pointer) }
    }

    /// Sends `request` through the reused handle (see the type's documentation).
    /// - Throws: ``HTTPTransportError`` when no answer came; `CancellationError` when cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let exchange = Exchange()
        return try await withTaskCancellationHandler {
            let url = request.url.absoluteString
            let curl: CurlEntryPoints
            do {
                curl = try library.entryPoints()
            } catch {
                throw HTTPTransportError(url: url, reason: "\(error)", method: request.method)
            }
            guard let handle = reusedHandle(curl) else {
                throw HTTPTransportError(url: url, reason: "libcurl could not create a handle", method: request.method)
            }
            return try Self.perform(request, curl: curl, handle: handle, caFile: caFile, exchange: exchange)
        } onCancel: {
            exchange.cancelled.store(true, ordering: .relaxed)
        }
    }

    /// The easy handle, made with `curl` on first use.
    private func reusedHandle(_ curl: CurlEntryPoints) -> UnsafeMutableRawPointer? {
        if let easy { return easy.pointer }
        guard let made = curl.easyInit() else { return nil }
        easy = EasyHandle(pointer: made, cleanup: curl.easyCleanup)
        return made
    }

    // @unchecked Sendable: only the actor uses the handle while it lives, and its nonisolated
    // deinit frees it once no transfer and no reference remain.
    /// An easy handle and the cleanup function of the library that made it.
    private struct EasyHandle: @unchecked Sendable {
        /// The `CURL *`.
        let pointer: UnsafeMutableRawPointer
        /// `curl_easy_cleanup` of the library that made it.
        let cleanup: hg_curl_easy_cleanup_fn
    }

    /// One transfer's response and cancellation flag, reached from libcurl's callbacks through
    /// their context pointer and from the cancellation handler. The callbacks run on the thread
    /// running `curl_easy_perform`, so the lock around the response is never contended; it is
    /// there so that the compiler checks what the handler may touch.
    final class Exchange: Sendable {
        /// What the callbacks have received so far.
        struct Response: Sendable {
            var body = Data()
            var headers: [String: String] = [:]
        }

        let response = Mutex(Response())
        let cancelled = Atomic<Bool>(false)
    }

    /// One transfer on `handle`. Synchronous: called by ``send(_:)`` on the transport's queue.
    private static func perform(
        _ request: HTTPRequest, curl: CurlEntryPoints, handle: UnsafeMutableRawPointer, caFile: String?,
        exchange: Exchange
    ) throws -> HTTPResponse {
        let url = request.url.absoluteString
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer {
            // The handle outlives this request: leave it no pointer to this request's memory.
            _ = hg_curl_setopt_pointer(curl.setopt, handle, CURLOPT_HTTPHEADER, nil)
            _ = hg_curl_setopt_pointer(curl.setopt, handle, CURLOPT_ERRORBUFFER, nil)
            _ = hg_curl_setopt_pointer(curl.setopt, handle, CURLOPT_POSTFIELDS, nil)
            _ = hg_curl_setopt_pointer(curl.setopt, handle, CURLOPT_WRITEDATA, nil)
            _ = hg_curl_setopt_pointer(curl.setopt, handle, CURLOPT_HEADERDATA, nil)
            _ = hg_curl_setopt_pointer(curl.setopt, handle, CURLOPT_XFERINFODATA, nil)
            curl.slistFreeAll(headerList)
        }
        // "Expect:" turns off libcurl's 100-continue round trip for larger bodies.
        for line in request.headers.map({ "\($0.name): \($0.value)" }) + ["Expect:"] {
            headerList = curl.slistAppend(headerList, line)
        }
        let setopt = curl.setopt
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        let code: CURLcode = request.body.withUnsafeBytes { body in
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                var status = CURLE_OK
                func set(_ result: CURLcode) { if status == CURLE_OK { status = result } }
                set(hg_curl_setopt_string(setopt, handle, CURLOPT_URL, url))
                set(hg_curl_setopt_string(setopt, handle, CURLOPT_PROTOCOLS_STR, "http,https"))
                set(hg_curl_setopt_long(setopt, handle, CURLOPT_FOLLOWLOCATION, 0))
                set(hg_curl_setopt_long(setopt, handle, CURLOPT_NOSIGNAL, 1))
                set(hg_curl_setopt_long(setopt, handle, CURLOPT_SSL_VERIFYPEER, 1))
                set(hg_curl_setopt_long(setopt, handle, CURLOPT_SSL_VERIFYHOST, 2))
                if let caFile { set(hg_curl_setopt_string(setopt, handle, CURLOPT_CAINFO, caFile)) }
                set(hg_curl_setopt_long(setopt, handle, CURLOPT_TIMEOUT_MS, Int(max(1, request.timeout * 1000))))
                if request.method == "POST" {
                    set(hg_curl_setopt_pointer(setopt, handle, CURLOPT_CUSTOMREQUEST, nil))
                    set(hg_curl_setopt_long(setopt, handle, CURLOPT_POST, 1))
                    set(hg_curl_setopt_pointer(
                        setopt, handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: body.baseAddress)))
                    set(hg_curl_setopt_long(setopt, handle, CURLOPT_POSTFIELDSIZE, body.count))
                } else {
                    // A bodiless request with another method (DELETE): a GET's transfer, renamed.
                    set(hg_curl_setopt_long(setopt, handle, CURLOPT_HTTPGET, 1))
                    set(hg_curl_setopt_string(setopt, handle, CURLOPT_CUSTOMREQUEST, request.method))
                }
                set(hg_curl_setopt_pointer(setopt, handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)))
                set(hg_curl_setopt_pointer(setopt, handle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errors.baseAddress)))
                set(hg_curl_setopt_callback(setopt, handle, CURLOPT_WRITEFUNCTION, curlBody))
                set(hg_curl_setopt_pointer(setopt, handle, CURLOPT_WRITEDATA, context))
                set(hg_curl_setopt_callback(setopt, handle, CURLOPT_HEADERFUNCTION, curlHeader))
                set(hg_curl_setopt_pointer(setopt, handle, CURLOPT_HEADERDATA, context))
                set(hg_curl_setopt_long(setopt, handle, CURLOPT_NOPROGRESS, 0))
                set(hg_curl_setopt_progress(setopt, handle, curlProgress))
                set(hg_curl_setopt_pointer(setopt, handle, CURLOPT_XFERINFODATA, context))
                guard status == CURLE_OK else { return status }
                return curl.easyPerform(handle)
            }
        }
        if exchange.cancelled.load(ordering: .relaxed) { throw CancellationError() }
        guard code == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let reason = detail.isEmpty ? curl.easyStrerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)" : detail
            throw HTTPTransportError(url: url, reason: reason, isTimeout: code == CURLE_OPERATION_TIMEDOUT, method: request.method)
        }
        var status = 0
        _ = hg_curl_response_code(curl.getinfo, handle, &status)
        let response = exchange.response.withLock { $0 }
        return HTTPResponse(status: status, headers: response.headers, body: response.body)
    }
}

// libcurl callbacks: C function pointers, so they reach the exchange through the context pointer.

private func curlBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let data, let context else { return 0 }  // 0 makes libcurl abort the transfer
    let exchange = Unmanaged<CurlTransport.Exchange>.fromOpaque(context).takeUnretainedValue()
    exchange.response.withLock { $0.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count) }
    return size * count
}

private func curlHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let data, let context else { return 0 }
    let exchange = Unmanaged<CurlTransport.Exchange>.fromOpaque(context).takeUnretainedValue()
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        exchange.response.withLock { $0.headers = [:] }  // a new response (after an interim 1xx): start over
    } else if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].trimmed().lowercased()
        let value = line[line.index(after: colon)...].trimmed()
        exchange.response.withLock { $0.headers[name] = value }
    }
    return size * count
}

private func curlProgress(_ context: UnsafeMutableRawPointer?, _: curl_off_t, _: curl_off_t, _: curl_off_t, _: curl_off_t) -> Int32 {
    guard let context else { return 0 }
    let exchange = Unmanaged<CurlTransport.Exchange>.fromOpaque(context).takeUnretainedValue()
    return exchange.cancelled.load(ordering: .relaxed) ? 1 : 0  // non-zero aborts the transfer
}

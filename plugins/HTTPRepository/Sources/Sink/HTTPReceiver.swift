import FoundationEssentials
import HealthModel
import HealthStore
import RemoteSinkKit
import SampleBus
import GatewayRuntime
import Synchronization

/// The HTTP repository as a ``RemoteReceiver``: a batch becomes one POST (and, for Open mHealth,
/// a DELETE per deleted data point), built the same way on every attempt: the same body under
/// the same `Idempotency-Key`, the batch's key. The key names that one body: it is derived from
/// the batch's changes and ``payloadIdentity`` (the format, the series form, FHIR's patient
/// reference, the content coding), everything else the body is made of.
///
/// Several batches may be in flight: each request takes a transport of its own from the pool (one
/// libcurl handle per request in flight, each on its own queue, each keeping its connection).
struct HTTPReceiver: RemoteReceiver {
    let endpoint: URL
    let builder: PayloadBuilder
    let gzip: Bool
    let deflate: DeflateLibrary
    let timeout: Double
    let credentials: Credentials
    let policy: DeliveryPolicy
    let name: String
    let transports: TransportPool
    /// Where the deletion of a series' data points stopped at a failure (Open mHealth).
    let seriesDeletions = SeriesDeletionProgress()
    /// The records delivered batches left out (`fhir-phd`), for the log and the status.
    let leftOut = LeftOutRecords()

    var destination: String { endpoint.absoluteString }

    /// The content coding, then the builder's settings (``PayloadBuilder/identity``).
    var payloadIdentity: String { "content-encoding=\(gzip ? "gzip" : "identity") \(builder.identity)" }

    func prepare(context: FollowerContext) async {
        do {
            try await transports.prepare()
        } catch {
            // Not thrown: the follower runs on as during an outage, each attempt failing with the
            // same error (the transport tries to load libcurl again each time).
            context.logger.error("\(error). The changes wait in the store and delivery is retried with backoff")
            context.status.reportError("\(error)", at: context.clock.now())
        }
        if gzip {
            do {
                try deflate.load()
            } catch {
                context.logger.notice("\(error)")
            }
        }
    }

    func accepts(_ change: FollowedChange) -> Bool { builder.accepts(change) }

    func send(_ batch: FollowerBatch, context: FollowerContext) async -> DeliveryOutcome {
        var headers: [(name: String, value: String)] = [
            ("Accept", "application/json"), ("User-Agent", "healthgate/\(name)"),
        ]
        do {
            if let authorization = try credentials.authorization() { headers.append(("Authorization", authorization)) }
        } catch {
            context.status.setDetail("authError", error.description)
            return .retry(reason: error.description, status: nil, retryAfter: nil)
        }
        // Open mHealth: deletions (and the earlier versions of updated data points) first.
        for deletion in builder.deletions(for: batch) {
            let outcome = switch deletion {
            case .dataPoint(let id): await delete(id, headers: headers, context: context).outcome
            case .seriesQuantities(let series, let limit): await deleteQuantities(of: series, limit: limit, headers: headers, context: context)
            }
            guard outcome == .delivered else { return outcome }
        }
        let payload: PayloadBuilder.Payload
        do {
            payload = try builder.payload(for: batch)
        } catch {
            // A value JSON cannot hold: refused like a record the repository refuses, so the
            // follower narrows it down to the record and keeps it as a dead letter.
            return .rejected(status: 0, answer: "cannot encode the batch: \(error)")
        }
        guard let body = payload.body else {
            leftOut.delivered(payload.leftOut, format: builder.format, context: context)
            return .delivered
        }
        var postHeaders = headers + [("Content-Type", builder.contentType), ("Idempotency-Key", batch.key)]
        var compressed = body
        if gzip {
            // The key names a gzip-coded body: the body sent as it is would be another payload
            // under it. zlib fails only without memory, which a retry may find again.
            do {
                compressed = try compress(body)
            } catch {
                return .retry(reason: "cannot gzip the body: \(error)", status: nil, retryAfter: nil)
            }
            postHeaders.append(("Content-Encoding", "gzip"))
        }
        let outcome = await exchange(
            HTTPRequest(method: "POST", url: endpoint, headers: postHeaders, body: compressed, timeout: timeout), context: context,
            absentIsDone: false)
        // Counted once, when the batch is delivered: a retried batch leaves out the same records.
        if outcome == .delivered { leftOut.delivered(payload.leftOut, format: builder.format, context: context) }
        return outcome
    }

    /// `DELETE <url>/<uuid>`; whether the repository held it (404 and 410 are done too).
    private func delete(
        _ id: SampleID, headers: [(name: String, value: String)], context: FollowerContext
    ) async -> (outcome: DeliveryOutcome, absent: Bool) {
        var status: Int?
        let outcome = await exchange(
            HTTPRequest(
                method: "DELETE", url: endpoint.appendingPathComponent(id.uuidString.lowercased()), headers: headers, body: Data(),
                timeout: timeout),
            context: context, absentIsDone: true, status: &status)
        return (outcome, status == 404 || status == 410)
    }

    /// Deletes the data points of `series`' quantities, index by index, until the repository
    /// holds none (``OpenMHealthDeletion/seriesQuantities(of:limit:)``). A failure keeps the
    /// index it failed at (``SeriesDeletionProgress``), so the batch's retry resumes there instead
    /// of taking the data points deleted before it for the series' end.
    private func deleteQuantities(
        of series: SampleID, limit: Int, headers: [(name: String, value: String)], context: FollowerContext
    ) async -> DeliveryOutcome {
        let resumed = seriesDeletions.resume(series)
        var index = resumed
        while index < limit {
            let (outcome, absent) = await delete(SampleID(quantity: index, ofSeries: series), headers: headers, context: context)
            guard outcome == .delivered else {
                seriesDeletions.failed(series, at: index)
                return outcome
            }
            // The index a failure left may have been deleted by the request whose answer was lost.
            if absent, index > resumed || resumed == 0 { break }
            index += 1
        }
        if index == limit {
            context.logger.warning(
                "the repository answered every DELETE of the \(limit) data points series \(series) can have as done, none with 404: "
                    + "it may not say when it holds no such data point, and then the sink cannot tell where the series ended")
        }
        seriesDeletions.finished(series)
        return .delivered
    }

    /// `body` gzip-compressed by libdeflate, or zlib without it.
    /// - Throws: ``GzipError`` when zlib fails.
    private func compress(_ body: Data) throws(GzipError) -> Data {
        if let bytes = body.withUnsafeBytes({ deflate.gzip($0) }) { return Data(bytes) }
        return try Gzip.compress(body)
    }

    /// One request; `absentIsDone` treats 404 and 410 as done (deleting what is not there).
    private func exchange(_ request: HTTPRequest, context: FollowerContext, absentIsDone: Bool) async -> DeliveryOutcome {
        var status: Int?
        return await exchange(request, context: context, absentIsDone: absentIsDone, status: &status)
    }

    /// One request, with the status it was answered with.
    private func exchange(
        _ request: HTTPRequest, context: FollowerContext, absentIsDone: Bool, status: inout Int?
    ) async -> DeliveryOutcome {
        do {
            let response = try await transports.send(request)
            status = response.status
            context.status.setDetail("lastHTTPStatus", String(response.status))
            if absentIsDone, response.status == 404 || response.status == 410 { return .delivered }
            let outcome = policy.outcome(of: response, now: context.clock.now())
            switch outcome {
            case .delivered: context.status.setDetail("authError", nil)
            case .authentication(let status):
                context.status.setDetail("authError", "authentication failed (\(status)): check \(credentials.source)")
            default: break
            }
            return outcome
        } catch let error as HTTPTransportError {
            context.status.setDetail("lastHTTPStatus", error.isTimeout ? "timeout" : "no answer")
            return DeliveryPolicy.outcome(of: error)
        } catch {
            return .retry(reason: "\(error)", status: nil, retryAfter: nil)
        }
    }
}

/// Transports for the requests in flight: each request takes a free one, so requests to a slow
/// repository wait side by side instead of in turn behind one handle.
final class TransportPool: Sendable {
    private let transports: [any HTTPTransport]
    private let busy: Mutex<[Bool]>

    init(_ transports: [any HTTPTransport]) {
        precondition(!transports.isEmpty, "a pool needs a transport")
        self.transports = transports
        self.busy = Mutex(Array(repeating: false, count: transports.count))
    }

    func prepare() async throws {
        for transport in transports { try await transport.prepare() }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // A free transport, else the first: more requests than transports take turns.
        let index = busy.withLock { busy -> Int? in
            guard let free = busy.firstIndex(of: false) else { return nil }
            busy[free] = true
            return free
        }
        defer { if let index { busy.withLock { $0[index] = false } } }
        return try await transports[index ?? 0].send(request)
    }
}

/// Where the deletion of each series' Open mHealth data points stopped at a failure, so that a
/// retry of the batch resumes there: the points before it are gone, and the first one missing
/// would otherwise read as the series' end. Kept in memory only: a gateway stopped in the
/// middle of a series' deletion begins it again at index 0 after the restart, and stops at the
/// first point already deleted (README, "Formats"). Thread-safe: batches are sent side by side.
final class SeriesDeletionProgress: Sendable {
    private let stopped = Mutex<[SampleID: Int]>([:])

    /// The index to begin deleting `series`' data points at.
    func resume(_ series: SampleID) -> Int { stopped.withLock { $0[series] ?? 0 } }

    /// The deletion of the data point at `index` failed.
    func failed(_ series: SampleID, at index: Int) { stopped.withLock { $0[series] = index } }

    /// Every data point of `series` is deleted.
    func finished(_ series: SampleID) { stopped.withLock { $0[series] = nil } }
}

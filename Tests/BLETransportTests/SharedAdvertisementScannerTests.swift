import BLETransport
import Foundation
import GatewayTesting
import Synchronization
import XCTest

/// One scan per adapter, shared: consumers join one underlying scan, a late one gets the latest
/// advertisement of each device heard, the scan stops with the last consumer, listens for the
/// union of its consumers' matches, and a failure reaches every consumer while the next one
/// starts a new scan.
final class SharedAdvertisementScannerTests: XCTestCase {
    /// An underlying scanner whose scans the test drives: each `advertisements(matching:)` call is
    /// a scan, and what it was asked to listen for is kept.
    final class DrivenScanner: AdvertisementScanner {
        let scans = Mutex<[AsyncThrowingStream<Advertisement, any Error>.Continuation]>([])
        let asked = Mutex<[[AdvertisementMatch]]>([])
        let stopped = Mutex(0)

        var path: ScanPath? { .discovery }

        func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: Advertisement.self, throwing: (any Error).self)
            continuation.onTermination = { [self] termination in
                if case .cancelled = termination { stopped.withLock { $0 += 1 } }
            }
            scans.withLock { $0.append(continuation) }
            asked.withLock { $0.append(matches) }
            return stream
        }

        var scanCount: Int { scans.withLock { $0.count } }

        func send(_ advertisement: Advertisement, scan: Int) {
            scans.withLock { _ = $0[scan].yield(advertisement) }
        }

        func fail(scan: Int) {
            scans.withLock { $0[scan].finish(throwing: BLETransportError(.unavailable, "adapter hci0 was removed")) }
        }
    }

    /// What one consumer received, and how its stream ended.
    final class Received: Sendable {
        let advertisements = Mutex<[String]>([])
        let failure = Mutex<String?>(nil)
    }

    /// One consumer iterating the shared scanner in a task of its own.
    struct Consumer {
        let received = Received()
        let task: Task<Void, Never>

        init(_ scanner: SharedAdvertisementScanner, matching matches: [AdvertisementMatch] = []) {
            let received = received
            task = Task {
                do {
                    for try await advertisement in scanner.advertisements(matching: matches) {
                        received.advertisements.withLock { $0.append("\(advertisement.address) \(advertisement.manufacturerData[0x006B] ?? [])") }
                    }
                } catch {
                    received.failure.withLock { $0 = "\(error)" }
                }
            }
        }
    }

    func advertisement(_ address: String, _ value: UInt8, at seconds: TimeInterval) -> Advertisement {
        Advertisement(address: address, manufacturerData: [0x006B: [value]], receivedAt: Date(timeIntervalSince1970: seconds))
    }

    func testConsumersShareOneScanAndALateOneGetsEachDevicesLatestAdvertisement() async throws {
        let underlying = DrivenScanner()
        let scanner = SharedAdvertisementScanner(underlying)
        let first = Consumer(scanner)
        try await waitUntil("the first consumer started the scan") { underlying.scanCount == 1 }
        underlying.send(advertisement("A0:9E:1A:00:00:01", 1, at: 10), scan: 0)
        underlying.send(advertisement("A0:9E:1A:00:00:01", 2, at: 11), scan: 0)
        underlying.send(advertisement("C8:0F:10:00:00:01", 7, at: 12), scan: 0)
        try await waitUntil("the first consumer got three") { first.received.advertisements.withLock { $0.count } == 3 }

        let second = Consumer(scanner)
        try await waitUntil("the second consumer joined") { scanner.consumerCount == 2 }
        XCTAssertEqual(underlying.scanCount, 1, "a second consumer joins the running scan")
        try await waitUntil("the second got the latest of each device") { second.received.advertisements.withLock { $0.count } == 2 }
        XCTAssertEqual(second.received.advertisements.withLock { $0 }, ["A0:9E:1A:00:00:01 [2]", "C8:0F:10:00:00:01 [7]"])

        underlying.send(advertisement("A0:9E:1A:00:00:01", 3, at: 13), scan: 0)
        try await waitUntil("both got the new one") {
            first.received.advertisements.withLock { $0.last } == "A0:9E:1A:00:00:01 [3]" && second.received.advertisements.withLock { $0.last } == "A0:9E:1A:00:00:01 [3]"
        }

        first.task.cancel()
        try await waitUntil("the first consumer left") { scanner.consumerCount == 1 }
        XCTAssertEqual(underlying.stopped.withLock { $0 }, 0, "the scan runs while a consumer remains")
        second.task.cancel()
        try await waitUntil("the scan stopped with the last consumer") { underlying.stopped.withLock { $0 } == 1 }

        let third = Consumer(scanner)
        try await waitUntil("a new consumer starts a new scan") { underlying.scanCount == 2 }
        underlying.send(advertisement("A0:9E:1A:00:00:02", 9, at: 20), scan: 1)
        try await waitUntil("the third consumer got it") { third.received.advertisements.withLock { $0.count } == 1 }
        XCTAssertEqual(third.received.advertisements.withLock { $0 }, ["A0:9E:1A:00:00:02 [9]"], "nothing of the stopped scan is replayed")
        third.task.cancel()
    }

    /// The scan listens for the union of its consumers' matches: a consumer that asks for more
    /// restarts it wider (the narrower scan stopped), one asking for what it has joins it.
    func testAConsumerWithANewMatchWidensTheScan() async throws {
        let underlying = DrivenScanner()
        let scanner = SharedAdvertisementScanner(underlying)
        let polar = AdvertisementMatch.manufacturer(0x006B), scale = AdvertisementMatch.serviceData(BluetoothUUID(0x181D))
        let straps = Consumer(scanner, matching: [polar])
        try await waitUntil("the straps' scan") { underlying.scanCount == 1 }
        let scales = Consumer(scanner, matching: [scale, polar])
        try await waitUntil("a wider scan") { underlying.scanCount == 2 }
        try await waitUntil("the narrower scan stopped") { underlying.stopped.withLock { $0 } == 1 }
        XCTAssertEqual(underlying.asked.withLock { $0 }, [[polar], [polar, scale]])
        let more = Consumer(scanner, matching: [scale])
        try await waitUntil("the third joined") { scanner.consumerCount == 3 }
        XCTAssertEqual(underlying.scanCount, 2, "a consumer the running scan listens for joins it")
        underlying.send(advertisement("A0:9E:1A:00:00:01", 5, at: 40), scan: 1)
        try await waitUntil("every consumer got it from the wider scan") {
            [straps, scales, more].allSatisfy { $0.received.advertisements.withLock { $0 } == ["A0:9E:1A:00:00:01 [5]"] }
        }
        XCTAssertEqual(SharedAdvertisementScanner.union([[polar], [], [scale]]), [], "a consumer of everything makes the scan everything")
        for consumer in [straps, scales, more] { consumer.task.cancel() }
        try await waitUntil("the scan stopped with the last consumer") { underlying.stopped.withLock { $0 } == 2 }
    }

    func testAFailedScanEndsEveryConsumerAndTheNextConsumerStartsAnother() async throws {
        let underlying = DrivenScanner()
        let scanner = SharedAdvertisementScanner(underlying)
        let first = Consumer(scanner), second = Consumer(scanner)
        try await waitUntil("both joined one scan") { scanner.consumerCount == 2 }
        XCTAssertEqual(underlying.scanCount, 1)
        underlying.fail(scan: 0)
        try await waitUntil("both failed") { first.received.failure.withLock { $0 } != nil && second.received.failure.withLock { $0 } != nil }
        XCTAssertTrue(first.received.failure.withLock { $0 }?.contains("hci0 was removed") == true, first.received.failure.withLock { $0 } ?? "")
        XCTAssertEqual(scanner.consumerCount, 0)

        let third = Consumer(scanner)
        try await waitUntil("a new scan") { underlying.scanCount == 2 }
        underlying.send(advertisement("A0:9E:1A:00:00:01", 4, at: 30), scan: 1)
        try await waitUntil("the new scan delivers") { third.received.advertisements.withLock { $0 } == ["A0:9E:1A:00:00:01 [4]"] }
        third.task.cancel()
    }
}

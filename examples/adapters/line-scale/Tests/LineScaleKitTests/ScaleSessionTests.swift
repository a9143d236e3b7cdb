import Foundation
import HealthgateAdapter
import LineScaleKit
import XCTest

final class ScaleSessionTests: XCTestCase {
    private let configuration = LineScaleConfiguration(path: "/srv/scale/weighings.txt", serial: "SC-1001")
    private let start = ContinuousClock.now

    /// The sample file of the README.
    private static let sample: [UInt8] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../sample/weighings.txt")
        return (try? Array(Data(contentsOf: url))) ?? []
    }()

    /// Everything `bytes` make a session say, fed in `chunk`-byte pieces at one instant each.
    private func messages(
        _ bytes: some Collection<UInt8>, input: ScaleSession.Input, chunk: Int? = nil, step: Duration = .zero
    ) -> [AdapterOutput] {
        var session = ScaleSession(configuration: configuration, input: input)
        var messages: [AdapterOutput] = []
        var rest = Array(bytes)[...]
        var now = start
        repeat {
            messages += session.receive(rest.prefix(chunk ?? rest.count), at: now)
            rest = rest.dropFirst(chunk ?? rest.count)
            now += step
        } while !rest.isEmpty
        return messages
    }

    private func readings(_ messages: [AdapterOutput]) -> [QuantityMessage] {
        messages.compactMap { if case .quantity(let reading) = $0 { reading } else { nil } }
    }

    private func logs(_ messages: [AdapterOutput], _ level: LogLevel) -> [String] {
        messages.compactMap { if case .log(let log) = $0, log.level == level { log.message } else { nil } }
    }

    private func checkpoints(_ messages: [AdapterOutput]) -> [Int] {
        messages.compactMap { message in
            guard case .checkpoint(let checkpoint) = message else { return nil }
            return try? LineScaleCheckpoint.resuming(from: checkpoint.state)?.offset
        }
    }

    func testTheOpeningMessages() {
        let session = ScaleSession(configuration: configuration, input: .stream)
        XCTAssertEqual(session.opening(), [
            .device(DeviceMessage(id: "SC-1001", manufacturer: "Acme Scales", model: "LS-300", serialNumber: "SC-1001")),
            .status(StatusMessage(state: "reading /srv/scale/weighings.txt")),
        ])
    }

    func testTheSampleFile() throws {
        XCTAssertFalse(Self.sample.isEmpty, "sample/weighings.txt")
        let messages = messages(Self.sample, input: .file(offset: 0))
        func reading(_ value: Double, _ unit: HealthUnit, _ date: String, _ weighing: String) -> QuantityMessage {
            QuantityMessage(.bodyMass, value: value, unit: unit, start: date, id: "SC-1001/\(date)", device: "SC-1001", metadata: ["weighing": .string(weighing)])
        }
        XCTAssertEqual(readings(messages), [
            reading(72.45, .kilogram, "2026-11-29T07:58:43Z", "gross"),
            reading(159.7, .pound, "2026-11-29T19:12:05+01:00", "net"),
            reading(71.1, .kilogram, "2026-11-30T06:30:14Z", "gross"),
            reading(164.2, .pound, "2026-11-30T07:05:33.250Z", "gross"),
        ])
        XCTAssertEqual(logs(messages, .debug).count, 2, "the two US lines")
        let warnings = logs(messages, .warning)
        XCTAssertEqual(warnings.count, 2, "the OL line and the line without a sign")
        XCTAssert(warnings[0].hasPrefix("overload"), warnings[0])
        XCTAssert(warnings[0].contains("OL,GS,+9999.99kg"), "names the line: \(warnings[0])")
        XCTAssert(warnings[0].hasSuffix("(at byte 119 of /srv/scale/weighings.txt)"), warnings[0])
        XCTAssertEqual(checkpoints(messages), [Self.sample.count], "one checkpoint, after the readings")
        guard case .checkpoint = messages.last else { return XCTFail("the checkpoint comes last") }
    }

    /// The same messages whatever the chunks the file is read in, as long as the pacing lets a
    /// checkpoint through only at the end.
    func testEveryChunking() {
        let whole = messages(Self.sample, input: .file(offset: 0))
        for chunk in [1, 2, 5, 17, 64] {
            var all = messages(Self.sample, input: .file(offset: 0), chunk: chunk)
            // Read at one instant, only the first batch with a complete line makes a checkpoint.
            let offsets = checkpoints(all)
            XCTAssertEqual(offsets.count, 1, "chunks of \(chunk)")
            all.removeAll { if case .checkpoint = $0 { true } else { false } }
            XCTAssertEqual(all, whole.dropLast().map { $0 }, "chunks of \(chunk)")
        }
    }

    func testCheckpointsArePacedAndFollowTheirReadings() {
        // Each batch a line, 0.2 s apart: a checkpoint at most every 0.5 s.
        let lines = Self.sample.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map { Array($0) + [0x0A] }
        var session = ScaleSession(configuration: configuration, input: .file(offset: 0))
        var sent: [(offset: Int, at: Duration)] = []
        var consumedAtCheckpoint: [Int] = []
        var now = start
        for line in lines {
            for message in session.receive(line, at: now) {
                if case .checkpoint(let checkpoint) = message,
                    let offset = try? LineScaleCheckpoint.resuming(from: checkpoint.state)?.offset
                {
                    sent.append((offset, now - start))
                    consumedAtCheckpoint.append(session.consumed)
                }
            }
            now += .milliseconds(200)
        }
        XCTAssertEqual(sent.map(\.at), [.zero, .milliseconds(600), .milliseconds(1200)])
        XCTAssertEqual(sent.map(\.offset), consumedAtCheckpoint, "a checkpoint covers every line read before it")
        XCTAssertTrue(session.isCheckpointPending)
        XCTAssertEqual(session.idle(at: now + .milliseconds(100)).count, 1, "the last batch's, once the reader finds nothing new")
        XCTAssertFalse(session.isCheckpointPending)
        XCTAssertEqual(session.idle(at: now + .seconds(1)), [], "nothing new: no checkpoint")
    }

    func testAStreamHasNoCheckpoint() {
        var session = ScaleSession(configuration: configuration, input: .stream)
        let messages = session.receive(Self.sample, at: start) + session.idle(at: start + .seconds(1))
        XCTAssertEqual(readings(messages).count, 4)
        XCTAssertEqual(checkpoints(messages), [])
        XCTAssertFalse(session.isCheckpointPending)
        XCTAssertFalse(logs(messages, .warning).contains { $0.contains("at byte") }, "a serial line's offsets point nowhere")
    }

    /// Resumed at the end of any line, a session sends exactly the readings after it: together
    /// with those before, every reading once.
    func testResumingAtEveryLine() {
        let all = readings(messages(Self.sample, input: .file(offset: 0)))
        var offset = 0
        for line in Self.sample.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast() {
            offset += line.count + 1
            let before = readings(messages(Self.sample.prefix(offset), input: .file(offset: 0)))
            let after = messages(Self.sample.dropFirst(offset), input: .file(offset: offset))
            XCTAssertEqual(before + readings(after), all, "resumed at \(offset)")
            if offset < Self.sample.count {
                XCTAssertEqual(checkpoints(after), [Self.sample.count], "resumed at \(offset)")
            } else {
                XCTAssertEqual(checkpoints(after), [], "nothing new after the checkpoint: none sent again")
            }
        }
    }

    func testTheEndOfAFileNotFollowed() {
        var session = ScaleSession(configuration: configuration, input: .file(offset: 0))
        let messages = session.receive(Array("2026-11-30T06:30:14Z ST,GS,+0071.10kg\n2026-11-30T06:31:0".utf8), at: start)
        XCTAssertEqual(checkpoints(messages), [38], "the unfinished line is not consumed")
        let end = session.endOfFile()
        XCTAssertEqual(
            logs(end, .warning),
            [#"the last line has no newline and is left unread: "2026-11-30T06:31:0" (at byte 38 of /srv/scale/weighings.txt)"#])
        guard case .status(let status) = end.last else { return XCTFail("a status at the end") }
        XCTAssertEqual(status.state, "read to its end: /srv/scale/weighings.txt")
    }

    func testATruncatedFileIsReadAgain() {
        var session = ScaleSession(configuration: configuration, input: .file(offset: 0))
        _ = session.receive(Self.sample, at: start)
        XCTAssertEqual(logs(session.truncated(to: 10), .warning).count, 1)
        XCTAssertEqual(session.consumed, 0)
        let again = session.receive(Self.sample.prefix(80), at: start + .seconds(1))
        XCTAssertEqual(readings(again).map(\.id), ["SC-1001/2026-11-29T07:58:43Z"])
        XCTAssertEqual(checkpoints(again), [76])
    }

    func testLinesThatAreNoReading() {
        let text = "\r\n"
            + "2026-11-30T06:30:14Z ST,GS,+0000.00kg\r\n"
            + "2026-11-30T06:30:15Z ST,NT,-0002.10kg\r\n"
            + String(repeating: "#", count: 300) + "\n"
            + "2026-11-30T06:30:16Z ST,GS,+0071.10kg\r\n"
        var session = ScaleSession(configuration: configuration, input: .stream)
        let messages = session.receive(Array(text.utf8), at: start)
        let warnings = logs(messages, .warning)
        XCTAssertEqual(warnings.count, 3, "\(warnings)")
        XCTAssert(warnings[0].contains("no load"), warnings[0])
        XCTAssert(warnings[0].hasSuffix(#"+0000.00kg""#), "quoted without its CR: \(warnings[0])")
        XCTAssert(warnings[2].hasPrefix("a line longer than 256 bytes"), warnings[2])
        XCTAssertEqual(readings(messages).map(\.value), [71.1], "a blank line says nothing; the CRLF's CR is no part of the weight")
        XCTAssertEqual(session.counts, ScaleSession.Counts(readings: 1, unstable: 0, warnings: 3))
    }

    func testLogsNameTheDevice() {
        let messages = messages(Self.sample, input: .stream)
        for message in messages {
            if case .log(let log) = message { XCTAssertEqual(log.device, "SC-1001") }
        }
    }

    /// Every message the session makes is one the gateway takes: encoded and decoded again as
    /// the gateway decodes it (strictly, with the schema's checks).
    func testEveryMessageIsValid() throws {
        var session = ScaleSession(configuration: configuration, input: .file(offset: 0))
        let all = session.opening() + session.receive(Self.sample, at: start) + session.endOfFile()
        for message in all {
            XCTAssertEqual(try AdapterOutput(line: message.line.dropLast()), message)
        }
    }
}

import ANTProtocol
import XCTest

/// The framer: every chunking of a stream gives the same frames, garbage between frames is
/// skipped and counted once per episode, and a checksum failure never loses the frame after it.
final class ANTFramerTests: XCTestCase {
    /// A stream of real session messages: startup, capabilities, a response, broadcasts with
    /// the extended channel id.
    private let messages: [ANTMessage] = [
        .startup(reason: ANTMessage.startupAfterResetCommand),
        .capabilities(ANTCapabilities(maximumChannels: 8, maximumNetworks: 8, advancedOptions: 0xBA, advancedOptions2: 0x36)),
        .channelResponse(channel: 0, messageID: ANTMessageID.openRxScanMode.rawValue, code: .noError),
        .broadcastData(
            ANTBroadcast(
                channel: 0, page: [0x84, 0x12, 0x9E, 0x5A, 0x3C, 0xB1, 0x4F, 0x48],
                channelID: ANTChannelID(deviceNumber: 0x2CCC, deviceTypeByte: 120, transmissionType: 0xD1))),
        .broadcastData(ANTBroadcast(channel: 0, page: [0x00, 0xFF, 0xFF, 0xFF, 0x10, 0x04, 0xA4, 0x3C])),
        .channelEvent(channel: 0, code: .channelClosed),
    ]

    /// `stream` appended to a new framer `size` bytes at a time: the framer after it, and all
    /// that it put out.
    private func framed(_ stream: [UInt8], inChunksOf size: Int) -> (ANTFramer, [ANTFramer.Output]) {
        var framer = ANTFramer()
        var outputs: [ANTFramer.Output] = []
        var index = 0
        while index < stream.count {
            outputs += framer.append(stream[index..<min(stream.count, index + size)])
            index += size
        }
        return (framer, outputs)
    }

    private func frames(_ outputs: [ANTFramer.Output]) -> [ANTFrame] {
        outputs.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
    }

    func testFrameEncodingMatchesThePublishedExample() {
        // The protocol document's reset system example: A4 01 4A 00 EF.
        XCTAssertEqual(ANTMessage.resetSystem.encoded, [0xA4, 0x01, 0x4A, 0x00, 0xEF])
        // Open channel 0: A4 01 4B 00 EE.
        XCTAssertEqual(ANTMessage.openChannel(channel: 0).encoded, [0xA4, 0x01, 0x4B, 0x00, 0xEE])
    }

    func testEveryChunkingGivesTheSameFrames() throws {
        let stream = messages.flatMap(\.encoded)
        let expected = messages.map(\.frame)
        for size in 1...stream.count {
            let (framer, outputs) = framed(stream, inChunksOf: size)
            XCTAssertEqual(frames(outputs), expected, "chunks of \(size)")
            XCTAssertEqual(outputs.count, expected.count, "no resynchronisation in a clean stream (chunks of \(size))")
            XCTAssertEqual(framer.skippedBytes, 0)
        }
        for frame in expected {
            XCTAssertEqual(try ANTMessage(frame: frame).frame, frame)
        }
        XCTAssertEqual(try expected.map { try ANTMessage(frame: $0) }, messages)
    }

    func testGarbageBetweenFramesIsSkippedCountedAndReportedOncePerEpisode() {
        // Garbage with false sync bytes: a sync with a too-long length, a sync with a plausible
        // length and a wrong checksum, a frame cut short (as by an unplug).
        let garbage1: [UInt8] = [0x00, 0x13, 0xA4, 0xFF, 0x55]
        let garbage2: [UInt8] = [0xA4, 0x01, 0x4A, 0x00, 0x00]
        let cut = Array(messages[3].encoded.prefix(7))
        let stream =
            garbage1 + messages[0].encoded + messages[1].encoded + garbage2 + messages[2].encoded + cut
            + messages[3].encoded + messages[4].encoded + messages[5].encoded
        for size in 1...stream.count {
            let (framer, outputs) = framed(stream, inChunksOf: size)
            XCTAssertEqual(frames(outputs), messages.map(\.frame), "chunks of \(size)")
            let episodes = outputs.compactMap { if case .resynchronised(let count) = $0 { count } else { nil } }
            XCTAssertEqual(episodes, [garbage1.count, garbage2.count, cut.count], "chunks of \(size)")
            XCTAssertEqual(framer.skippedBytes, garbage1.count + garbage2.count + cut.count)
            XCTAssertEqual(framer.episodes, 3)
            // Each episode is reported just before the frame that ends it.
            if case .resynchronised = outputs.first {} else { XCTFail("the first output is the first episode") }
        }
    }

    func testGarbageAtTheEndIsPendingAndResetCountsAPartialFrame() {
        var framer = ANTFramer()
        XCTAssertEqual(framer.append([0x01, 0x02] + Array(messages[0].encoded.prefix(3))), [])
        XCTAssertEqual(framer.pendingSkippedBytes, 2)
        framer.reset()
        XCTAssertEqual(framer.pendingSkippedBytes, 5)
        XCTAssertEqual(framer.append(messages[0].encoded), [.resynchronised(skippedBytes: 5), .frame(messages[0].frame)])
        XCTAssertEqual(framer.pendingSkippedBytes, 0)
    }

    func testANeverEndingStreamOfNoiseHoldsABoundedBuffer() {
        var framer = ANTFramer()
        var generator = SystemRandomNumberGenerator()
        var total = 0
        for _ in 0..<200 {
            // Noise without sync bytes (random bytes after a sync may form a valid frame).
            let noise = (0..<100).map { _ in UInt8.random(in: 0...0xA3, using: &generator) }
            XCTAssertEqual(framer.append(noise), [])
            total += 100
        }
        // Then a sync announcing a long frame that never completes.
        XCTAssertEqual(framer.append([0xA4, 30]), [])
        total += 2
        // The last false sync announces 40 bytes: the frames after it wait for them, and none
        // is lost.
        let outputs = framer.append(Array(repeating: messages[2].encoded, count: 7).joined())
        XCTAssertEqual(outputs, [.resynchronised(skippedBytes: total)] + Array(repeating: .frame(messages[2].frame), count: 7))
        XCTAssertEqual(framer.skippedBytes, total)
    }

    func testShortPayloadsAreTypedErrorsAndUnknownIdsPassThrough() {
        XCTAssertThrowsError(try ANTMessage(frame: ANTFrame(id: 0x4E, payload: [0, 1, 2]))) { error in
            XCTAssertEqual(error as? ANTDecodingError, ANTDecodingError(what: "broadcast data (0x4E)", expected: 9, actual: 3))
        }
        XCTAssertThrowsError(try ANTMessage(frame: ANTFrame(id: 0x40, payload: [0, 1])))
        // A flag announcing a channel id that is not there.
        XCTAssertThrowsError(try ANTMessage(frame: ANTFrame(id: 0x4E, payload: Array(repeating: 0, count: 9) + [0x80, 1])))
        XCTAssertEqual(try ANTMessage(frame: ANTFrame(id: 0x3E, payload: [0x41])), .other(id: 0x3E, payload: [0x41]))
    }

    func testChannelResponsesAndEventsAreNamed() throws {
        let response = try ANTMessage(frame: ANTFrame(id: 0x40, payload: [0, 0x5B, 0x15]))
        XCTAssertEqual(response, .channelResponse(channel: 0, messageID: 0x5B, code: .channelInWrongState))
        XCTAssertEqual(ANTResponseCode.channelInWrongState.name, "CHANNEL_IN_WRONG_STATE")
        XCTAssertEqual(ANTResponseCode(rawValue: 0x99).name, "code 0x99")
        XCTAssertEqual(try ANTMessage(frame: ANTFrame(id: 0x40, payload: [0, 1, 7])), .channelEvent(channel: 0, code: .channelClosed))
        XCTAssertEqual(ANTMessageID.openRxScanMode.commandName, "open RX scan mode (0x5B)")
    }

    func testTheSessionCommandsEncodeAsThePublishedLayouts() {
        XCTAssertEqual(ANTMessage.requestMessage(channel: 0, messageID: 0x54).payload, [0x00, 0x54])
        XCTAssertEqual(ANTMessage.assignChannel(channel: 0, type: 0x00, network: 0).payload, [0, 0, 0])
        XCTAssertEqual(ANTMessage.channelID(channel: 0, id: .wildcard).payload, [0, 0, 0, 0, 0])
        XCTAssertEqual(ANTMessage.channelRFFrequency(channel: 0, frequency: 57).payload, [0, 57])
        XCTAssertEqual(ANTMessage.channelPeriod(channel: 1, period: 8070).payload, [1, 0x86, 0x1F])
        XCTAssertEqual(ANTMessage.libConfig(flags: ANTBroadcast.channelIDFlag).payload, [0, 0x80])
        XCTAssertEqual(ANTMessage.openRxScanMode.payload, [0])
        XCTAssertEqual(ANTMessage.searchTimeout(channel: 0, timeout: 255).payload, [0, 255])
    }

    func testTheNetworkKeyNeverPrints() throws {
        let key = try XCTUnwrap(ANTNetworkKey(hex: "01 23 45 67 89 AB CD EF"))
        XCTAssertEqual(key.bytes, [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
        XCTAssertEqual(ANTNetworkKey(hex: "0123456789abcdef"), key)
        XCTAssertEqual(ANTNetworkKey(hex: "0x01,0x23,0x45,0x67,0x89,0xAB,0xCD,0xEF\n"), key)
        XCTAssertNil(ANTNetworkKey(hex: "0123456789abcd"))
        XCTAssertNil(ANTNetworkKey(hex: "0123456789abcdeg"))
        XCTAssertNil(ANTNetworkKey(hex: "01 23 45 67 89 AB CD EF 00"))
        let message = ANTMessage.setNetworkKey(network: 0, key: key)
        for text in ["\(key)", String(reflecting: key), "\(message)", "\(message.frame)"] {
            XCTAssertFalse(text.contains("AB") || text.contains("ab") || text.contains("171"), text)
        }
        XCTAssertEqual(try ANTMessage(frame: message.frame), message)
    }
}

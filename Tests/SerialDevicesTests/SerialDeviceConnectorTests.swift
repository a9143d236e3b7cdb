import Dispatch
import GatewayRuntime
import GatewayTesting
import HealthModel
import LinuxSystem
import SampleBus
import SerialDevices
import XCTest

/// A member that hands each connection's bytes to the test and keeps the connection until it
/// ends, so the test sees the connection's status while it is open.
struct ProbeSource: SampleSource {
    let connector: SerialDeviceConnector
    let seen: AsyncStream<(SerialConnection, [UInt8])>.Continuation

    func run(context: SourceContext) async throws {
        try await connector.run(context: context) { [seen] connection in
            let reader = try connection.stream.startReading(queue: DispatchQueue(label: "probe"))
            defer { reader.cancel() }
            for await event in reader.events {
                switch event {
                case .bytes(let bytes):
                    seen.yield((connection, bytes))
                case .end(let end):
                    return end
                }
            }
            return .closed
        }
    }
}

/// The opening policy on a real pseudo-terminal: a `path` is opened with the line settings and
/// the member's session gets the bytes, the path's identity and the configured protocol.
final class SerialDeviceConnectorTests: XCTestCase {
    func testAPathIsOpenedAndItsBytesReachTheSession() async throws {
        let pty = try PseudoTerminal()
        let settings = try JSONValue.object(["path": .string(pty.slavePath), "deviceName": .string("Probe"), "decoder": .string("probe2")])
            .decodeStrictly(ProbeConfiguration.self).validated()
        let match = SerialDeviceMatch(kind: "serial-probe", protocols: ["probe1", "probe2"], defaultProtocol: "probe1", rulesFile: "x.rules")
        let (seen, continuation) = AsyncStream.makeStream(of: (SerialConnection, [UInt8]).self)
        let harness = try SourceHarness(name: "probe", kind: "serial-probe") { _ in
            ProbeSource(connector: SerialDeviceConnector(settings: settings, match: match), seen: continuation)
        }
        try await harness.run { harness in
            // The tty may not be open yet: what is written before is kept by the pty for the
            // first reader (the line discipline buffers the master's writes).
            try pty.write(Array("ST,1\n".utf8))
            var iterator = seen.makeAsyncIterator()
            let next = await iterator.next()
            let first = try XCTUnwrap(next)
            XCTAssertEqual(first.0.device.localIdentifier, pty.slavePath)
            XCTAssertEqual(first.0.device.name, "Probe")
            XCTAssertEqual(first.0.protocolName, "probe2")
            XCTAssertEqual(String(decoding: first.1, as: UTF8.self), "ST,1\n")
            XCTAssertEqual(harness.board.status(of: "probe")?.details["connection"], "open \(pty.slavePath) \(settings.serial.summary)")
        }
        pty.hangUp()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// An adapter's end of the protocol, for adapters written in Swift: the process's stdin and
/// stdout (docs/adapter-protocol.md).
///
/// ```swift
/// let channel = try AdapterChannel.open(adapter: "line-scale", version: "1.0")
/// let configuration = try channel.hello.configuration(as: MyConfiguration.self)  // a DeclaredConfiguration
/// try channel.send(QuantityMessage(.bodyMass, value: 72.4, unit: .kilogram, start: "2026-11-30T08:00:00Z", id: "S-1/2026-11-30T08:00:00Z"))
/// for await message in channel.messages { if case .stop = message { break } }
/// ```
///
/// Thread-safe: ``send(_:)`` may be called from any thread; lines are written whole, in call
/// order. ``messages`` ends when stdin ends (the gateway stopped or died).
public final class AdapterChannel: Sendable {
    /// The gateway's hello: the adapter's configuration and its last committed checkpoint.
    public let hello: GatewayHello
    /// The gateway's messages after its hello, in order; ends at `stop`'s end of input.
    public let messages: AsyncStream<GatewayInput>
    private let writing = Mutex<Void>(())

    private init(hello: GatewayHello, messages: AsyncStream<GatewayInput>) {
        self.hello = hello
        self.messages = messages
    }

    /// Reads the gateway's hello from stdin (blocking), answers it with this adapter's, and
    /// starts reading the gateway's later messages on a queue of their own.
    /// - Throws: ``AdapterMessageError`` when stdin ends before the hello, the first line is no
    ///   gateway hello, or the gateway speaks another protocol version (the adapter should exit).
    public static func open(adapter: String, version: String? = nil) throws(AdapterMessageError) -> AdapterChannel {
        guard let first = readLine(strippingNewline: true) else { throw AdapterMessageError("stdin ended before the gateway's hello") }
        guard case .hello(let hello) = try GatewayInput(line: Array(first.utf8)) else {
            throw AdapterMessageError("the gateway's first line is no hello: \(first)")
        }
        guard hello.protocolVersion == AdapterProtocol.version else {
            throw AdapterMessageError("the gateway speaks protocol \(hello.protocolVersion), this adapter \(AdapterProtocol.version)")
        }
        let (stream, continuation) = AsyncStream.makeStream(of: GatewayInput.self)
        let channel = AdapterChannel(hello: hello, messages: stream)
        try channel.send(AdapterHello(adapter: adapter, version: version))
        DispatchQueue(label: "healthgate-adapter.stdin").async {
            while let line = readLine(strippingNewline: true) {
                do {
                    continuation.yield(try GatewayInput(line: Array(line.utf8)))
                } catch {
                    // A line this version cannot read is reported, not fatal: the gateway may be newer.
                    channel.report("cannot read the gateway's line: \(error)")
                }
            }
            continuation.finish()
        }
        return channel
    }

    /// Writes `message` as one line on stdout.
    /// - Throws: ``AdapterMessageError`` when stdout is closed (the gateway is gone): the
    ///   adapter should exit.
    ///
    /// Blocks while the pipe is full: the gateway reads only as fast as its store takes the
    /// readings (the protocol's flow control). Call it from a thread of the adapter's own, or
    /// from a task that may wait.
    public func send(_ message: some AdapterMessageBody) throws(AdapterMessageError) {
        try writeLine(message.line)
    }

    private func writeLine(_ bytes: [UInt8]) throws(AdapterMessageError) {
        let written = writing.withLock { _ -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
        guard written else { throw AdapterMessageError("stdout is closed: the gateway is gone") }
    }

    /// Writes `message`, whichever message it is, as one line on stdout.
    /// - Throws: ``AdapterMessageError`` when stdout is closed.
    public func send(_ message: AdapterOutput) throws(AdapterMessageError) {
        try writeLine(message.line)
    }

    /// Writes `text` on stderr, which the gateway logs under the source's name.
    public func report(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

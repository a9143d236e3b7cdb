// line-scale: a healthgate adapter for a bench scale that prints one line per weighing
// (README.md). The gateway's lines on stdin, the adapter's on stdout, through AdapterChannel;
// the scale's port or file read by ScaleReader on a queue of its own.
import HealthgateAdapter
import LineScaleKit
#if canImport(Glibc)
import Glibc
#endif

let channel: AdapterChannel
do {
    channel = try AdapterChannel.open(adapter: "line-scale", version: "1.0")
} catch {
    // No hello, or another protocol version: nothing to speak with.
    let text = Array("line-scale: \(error)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

let configuration: LineScaleConfiguration
do {
    configuration = try channel.hello.configuration(as: LineScaleConfiguration.self)
} catch {
    try? channel.send(LogMessage("configuration: \(error)", level: .error))
    exit(1)
}

let outbox = MessageOutbox(channel: channel)
ScaleReader(configuration: configuration, checkpoint: channel.hello.checkpoint, outbox: outbox).start { failure in
    // The end of a file not followed: the adapter waits for stop.
    guard let failure else { return }
    _ = try? outbox.send([.log(LogMessage("\(failure)", level: .error, device: configuration.serial))])
    outbox.close()
    exit(1)
}

for await message in channel.messages {
    switch message {
    case .stop:
        // Exit now: a read blocked on a tty cannot be cancelled, and nothing needs flushing.
        outbox.close()
        exit(0)
    case .error(let error):
        // A line of ours the gateway could not read: a bug here, worth a line in its log.
        channel.report("the gateway reports an error\(error.fatal ? " (fatal)" : ""): \(error.reason)")
    case .ack, .refused, .hello, .unknown:
        // ack: the file is never changed, so a commit asks nothing of the adapter.
        // refused: the gateway logs it; the same line would be refused again, so it goes on.
        break
    }
}
// stdin ended: the gateway is gone or stopped without a stop.
outbox.close()
exit(0)

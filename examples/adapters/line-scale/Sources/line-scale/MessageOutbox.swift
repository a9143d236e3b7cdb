import HealthgateAdapter
import Synchronization

/// The reader's way to stdout: the channel, and a close after which nothing more is sent, so
/// that the adapter never exits in the middle of a line.
///
/// Thread-safe. ``close()`` waits for a batch being written to be written whole; the gateway
/// reads what an adapter writes until it exits (docs/adapter-protocol.md, "A session"), so the
/// wait is short even when the pipe was full.
final class MessageOutbox: Sendable {
    private let channel: AdapterChannel
    /// False once closed.
    private let isOpen = Mutex(true)

    init(channel: AdapterChannel) { self.channel = channel }

    /// Sends `messages` in order, each a whole line.
    /// - Returns: false once closed: nothing was sent.
    /// - Throws: ``AdapterMessageError`` when stdout is closed (the gateway is gone).
    @discardableResult
    func send(_ messages: [AdapterOutput]) throws(AdapterMessageError) -> Bool {
        try isOpen.withLock { isOpen throws(AdapterMessageError) -> Bool in
            guard isOpen else { return false }
            for message in messages { try channel.send(message) }
            return true
        }
    }

    /// Sends nothing more: waits for a batch being written, then refuses the next ones.
    func close() {
        isOpen.withLock { $0 = false }
    }
}

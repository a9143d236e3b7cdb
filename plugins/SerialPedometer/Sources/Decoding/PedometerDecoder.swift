public import SerialDevices

/// A pedometer protocol: how frames are cut and what a frame means.
///
/// Adding a protocol is one small type: pick a framer, parse a frame, and list the type in
/// ``PedometerProtocols``. Decoders are pure (no I/O, no clock) and deterministic, so they are
/// tested against fixtures in every chunking.
public protocol PedometerDecoder: Sendable {
    associatedtype Framer: ByteFramer
    /// The name used in configuration (`decoder`) and in udev's `HEALTHGATE_DECODER`.
    static var name: String { get }
    /// A framer with this decoder's settings (for example the line-length cap).
    func makeFramer() -> Framer
    /// The bytes the gateway sends after connecting to ask the device who it is; nil if the
    /// protocol has no such request.
    var identificationRequest: [UInt8]? { get }
    /// Decodes one frame.
    func decode(frame: [UInt8]) throws(PedometerDecodeError) -> PedometerMessage
}

/// A byte stream decoder: a framer and a frame decoder together, fed raw chunks.
public struct PedometerStreamDecoder<Decoder: PedometerDecoder>: Sendable {
    public let decoder: Decoder
    private var framer: Decoder.Framer

    public init(_ decoder: Decoder) {
        self.decoder = decoder
        self.framer = decoder.makeFramer()
    }

    /// Feeds a chunk; returns one outcome per completed frame, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [Result<PedometerMessage, PedometerDecodeError>] {
        framer.append(bytes).map { framed in
            switch framed {
            case .success(let frame):
                do throws(PedometerDecodeError) {
                    return .success(try decoder.decode(frame: frame))
                } catch {
                    return .failure(error)
                }
            case .failure(.overlong(let length, let maximum)):
                return .failure(PedometerDecodeError(.overlong, "line longer than \(maximum) bytes (\(length)+ bytes dropped)"))
            case .failure(let other):
                return .failure(PedometerDecodeError(.framing, other.description))
            }
        }
    }

    /// Forgets the frame being assembled: after input was lost (chunks dropped under a flood)
    /// its start and whatever follows the gap belong to different frames, and joined they could
    /// pass for a frame (HGP/1 accepts sentences without a checksum).
    public mutating func discardPartialFrame() {
        framer = decoder.makeFramer()
    }
}

protocol PedometerStreamDecoding: Sendable {
    mutating func feedChunk(_ bytes: [UInt8]) -> [Result<PedometerMessage, PedometerDecodeError>]
    mutating func discardPartialFrame()
}

extension PedometerStreamDecoder: PedometerStreamDecoding {
    mutating func feedChunk(_ bytes: [UInt8]) -> [Result<PedometerMessage, PedometerDecodeError>] {
        feed(bytes)
    }
}

/// A type-erased stream decoder, so the source can pick a protocol by name at run time.
public struct AnyPedometerStreamDecoder: Sendable {
    private var base: any PedometerStreamDecoding
    /// See ``PedometerDecoder/identificationRequest``.
    public let identificationRequest: [UInt8]?
    /// See ``PedometerDecoder/name``.
    public let name: String

    /// Wraps a decoder.
    public init<D: PedometerDecoder>(_ decoder: D) {
        base = PedometerStreamDecoder(decoder)
        name = D.name
        identificationRequest = decoder.identificationRequest
    }

    /// Feeds a chunk; returns one outcome per completed frame, in order.
    public mutating func feed(_ bytes: [UInt8]) -> [Result<PedometerMessage, PedometerDecodeError>] {
        base.feedChunk(bytes)
    }

    /// See ``PedometerStreamDecoder/discardPartialFrame()``.
    public mutating func discardPartialFrame() {
        base.discardPartialFrame()
    }
}

/// The protocols compiled in, by name. Explicit, like the plugin catalog.
public enum PedometerProtocols {
    /// The names accepted by `decoder` in the configuration.
    public static let names: [String] = [HGPTextDecoder.name]

    /// A stream decoder for `name`, with lines capped at `maximumLineLength`; nil for an unknown
    /// name.
    public static func decoder(named name: String, maximumLineLength: Int) -> AnyPedometerStreamDecoder? {
        switch name {
        case HGPTextDecoder.name: AnyPedometerStreamDecoder(HGPTextDecoder(maximumLineLength: maximumLineLength))
        default: nil
        }
    }
}

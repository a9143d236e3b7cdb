/// One 8-byte data page of an ANT+ heart-rate monitor (device type 120), decoded (ANT+ Device
/// Profile, Heart Rate Monitor, §5: the data pages).
///
/// Every page ends with the same four bytes: the time of the last beat (1/1024 s, rolling over
/// every 64 s), the beat count (rolling over at 256) and the computed heart rate. Byte 0 holds
/// the page number (bits 0–6) and the page-change toggle (bit 7, flipped every fourth message);
/// bytes 1–3 are the page's own. A legacy strap never flips the toggle and its bytes 0–3 mean
/// nothing defined: decode with `pageSpecificTrusted: false` and only the common four bytes are
/// read (``Content/legacy``). Pure: no I/O.
public struct ANTHeartRatePage: Hashable, Sendable {
    /// What bytes 1–3 hold.
    public enum Content: Hashable, Sendable {
        /// Page 0, the default page: nothing (bytes 1–3 reserved).
        case defaultData
        /// Page 1: the cumulative operating time, in seconds (a 24-bit count of 2 s units).
        case operatingTime(seconds: UInt32)
        /// Page 2: the manufacturer id (``ANTManufacturer``) and the upper 16 bits of the serial
        /// number.
        case manufacturer(id: UInt8, serialNumber: UInt16)
        /// Page 3: hardware version, software version, model number.
        case product(hardwareVersion: UInt8, softwareVersion: UInt8, modelNumber: UInt8)
        /// Page 4: a manufacturer-specific byte and the previous beat's event time (1/1024 s).
        case previousBeat(manufacturerSpecific: UInt8, previousBeatTime: UInt16)
        /// Page 5: swim interval summary: interval average and maximum, session average (bpm).
        case swimInterval(intervalAverage: UInt8, intervalMaximum: UInt8, sessionAverage: UInt8)
        /// Page 6: the features supported and enabled (bit 0 extended running, 1 cycling, 2
        /// swimming; bits 6–7 manufacturer-specific).
        case capabilities(featuresSupported: UInt8, featuresEnabled: UInt8)
        /// Page 7: the battery.
        case battery(ANTBatteryStatus)
        /// Bytes 1–3 not trusted: a legacy strap, or a toggle not yet seen to change.
        case legacy
        /// A page number this decoder does not know (bytes 1–3 as sent).
        case unknown(bytes: [UInt8])
    }

    /// The page-change toggle (bit 7 of byte 0).
    public var toggle: Bool
    /// The page number (bits 0–6 of byte 0); meaningless when ``content`` is ``Content/legacy``.
    public var pageNumber: UInt8
    /// The last beat's event time, in 1/1024 s, rolling over at 65 536 (64 s).
    public var beatTime: UInt16
    /// The beat count, rolling over at 256.
    public var beatCount: UInt8
    /// The computed heart rate byte, in beats per minute; 0 means invalid (``heartRate``).
    public var computedHeartRate: UInt8
    /// What bytes 1–3 hold.
    public var content: Content

    /// A page from its fields (for the simulated stick and tests).
    public init(toggle: Bool, pageNumber: UInt8, beatTime: UInt16, beatCount: UInt8, computedHeartRate: UInt8, content: Content) {
        self.toggle = toggle
        self.pageNumber = pageNumber & 0x7F
        self.beatTime = beatTime
        self.beatCount = beatCount
        self.computedHeartRate = computedHeartRate
        self.content = content
    }

    /// Decodes a page. Throws when `bytes` is not exactly 8 bytes. With `pageSpecificTrusted`
    /// false, bytes 1–3 are not read (``Content/legacy``).
    public init(bytes: some Collection<UInt8>, pageSpecificTrusted: Bool = true) throws(ANTDecodingError) {
        let bytes = Array(bytes)
        guard bytes.count == 8 else { throw ANTDecodingError(what: "heart-rate page", expected: 8, actual: bytes.count) }
        toggle = bytes[0] & 0x80 != 0
        pageNumber = bytes[0] & 0x7F
        beatTime = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        beatCount = bytes[6]
        computedHeartRate = bytes[7]
        guard pageSpecificTrusted else {
            content = .legacy
            return
        }
        let word = UInt16(bytes[2]) | UInt16(bytes[3]) << 8
        switch pageNumber {
        case 0: content = .defaultData
        case 1: content = .operatingTime(seconds: (UInt32(bytes[1]) | UInt32(bytes[2]) << 8 | UInt32(bytes[3]) << 16) * 2)
        case 2: content = .manufacturer(id: bytes[1], serialNumber: word)
        case 3: content = .product(hardwareVersion: bytes[1], softwareVersion: bytes[2], modelNumber: bytes[3])
        case 4: content = .previousBeat(manufacturerSpecific: bytes[1], previousBeatTime: word)
        case 5: content = .swimInterval(intervalAverage: bytes[1], intervalMaximum: bytes[2], sessionAverage: bytes[3])
        case 6: content = .capabilities(featuresSupported: bytes[2], featuresEnabled: bytes[3])
        case 7: content = .battery(ANTBatteryStatus(bytes: bytes[1...3]))
        default: content = .unknown(bytes: Array(bytes[1...3]))
        }
    }

    /// The computed heart rate, nil when the strap sends 0 (invalid: no contact yet).
    public var heartRate: UInt8? { computedHeartRate == 0 ? nil : computedHeartRate }

    /// The previous beat's event time (page 4 only).
    public var previousBeatTime: UInt16? {
        if case .previousBeat(_, let time) = content { time } else { nil }
    }

    /// The page's 8 bytes on the wire.
    public var bytes: [UInt8] {
        let specific: [UInt8] =
            switch content {
            case .defaultData, .legacy: [0xFF, 0xFF, 0xFF]
            case .operatingTime(let seconds):
                [UInt8(truncatingIfNeeded: seconds / 2), UInt8(truncatingIfNeeded: (seconds / 2) >> 8), UInt8(truncatingIfNeeded: (seconds / 2) >> 16)]
            case .manufacturer(let id, let serial): [id, UInt8(serial & 0xFF), UInt8(serial >> 8)]
            case .product(let hardware, let software, let model): [hardware, software, model]
            case .previousBeat(let specific, let time): [specific, UInt8(time & 0xFF), UInt8(time >> 8)]
            case .swimInterval(let average, let maximum, let session): [average, maximum, session]
            case .capabilities(let supported, let enabled): [0xFF, supported, enabled]
            case .battery(let battery): battery.bytes
            case .unknown(let bytes): Array((bytes + [0xFF, 0xFF, 0xFF]).prefix(3))
            }
        return [(toggle ? 0x80 : 0) | pageNumber] + specific
            + [UInt8(beatTime & 0xFF), UInt8(beatTime >> 8), beatCount, computedHeartRate]
    }
}

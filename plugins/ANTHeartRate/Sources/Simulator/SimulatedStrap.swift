import ANTProtocol

/// One simulated ANT+ heart-rate strap: a beat model and the pages it sends, per the Heart Rate
/// Monitor profile (§5–6): four messages a second, the toggle flipped every fourth message,
/// main page 4 with background pages 2, 3, 7 and 1 in turn now and then, the first (page 2) as
/// soon as the toggle has changed, so a short run hears the serial number; a legacy strap sends
/// page 0 bytes and never toggles. Pure: time comes in as seconds since the simulation started.
struct SimulatedStrap: Sendable {
    /// The strap's id.
    let id: ANTChannelID
    /// A legacy strap: no toggle, no page-specific bytes.
    let legacy: Bool
    /// The strap's base heart rate (bpm).
    let baseRate: Double
    /// The manufacturer id it reports on page 2.
    let manufacturer: UInt8
    /// Its serial number, whose upper half page 2 reports (its lower 20 bits are the extended
    /// device number).
    let serialNumber: ANTSerialNumber
    private var beatSeconds: Double
    private var beatTime: UInt16
    private var previousBeatTime: UInt16
    private var beatCount: UInt8
    private var messages = 0
    private var rateTick = 0

    /// A strap starting near the rollover of its 16-bit beat time and 8-bit count, so that a
    /// short run crosses both.
    init(
        id: ANTChannelID, legacy: Bool, baseRate: Double, manufacturer: UInt8, serialNumber: ANTSerialNumber, startTime: UInt16,
        startCount: UInt8
    ) {
        self.id = id
        self.legacy = legacy
        self.baseRate = baseRate
        self.manufacturer = manufacturer
        self.serialNumber = serialNumber
        beatSeconds = 0
        beatTime = startTime
        previousBeatTime = startTime &- 800
        beatCount = startCount
    }

    /// The heart rate at `seconds`: the base rate with a slow swing, as in an interval class.
    func heartRate(at seconds: Double) -> Double {
        let phase = (seconds / 90).truncatingRemainder(dividingBy: 1)
        let swing = phase < 0.5 ? phase * 2 : (1 - phase) * 2
        return min(200, max(45, baseRate + 30 * swing))
    }

    /// Advances the beats to `seconds` and returns the next message's 8-byte page.
    mutating func page(at seconds: Double) -> [UInt8] {
        // Beats due by now; their times are exact 1/1024 s ticks, so RR values are integers.
        while true {
            let rr = UInt16(max(250, min(2000, (60 / heartRate(at: beatSeconds) * 1024).rounded())))
            let next = beatSeconds + Double(rr) / 1024
            guard next <= seconds else { break }
            beatSeconds = next
            previousBeatTime = beatTime
            beatTime &+= rr
            beatCount &+= 1
        }
        let rate = UInt8(heartRate(at: beatSeconds).rounded())
        defer { messages += 1 }
        if legacy {
            return ANTHeartRatePage(
                toggle: false, pageNumber: 0, beatTime: beatTime, beatCount: beatCount, computedHeartRate: rate, content: .defaultData
            ).bytes
        }
        let block = messages / 4
        let toggle = block % 2 == 1
        let content: ANTHeartRatePage.Content
        let number: UInt8
        // One block of four in eight carries a background page, in turn; the first is the block
        // right after the toggle's first change, which the receiver needs before it trusts one.
        if block % 8 == 1 {
            switch (block / 8) % 4 {
            case 0:
                number = 2
                content = .manufacturer(id: manufacturer, serialNumber: serialNumber.upperBits)
            case 1:
                number = 3
                content = .product(hardwareVersion: 4, softwareVersion: 12, modelNumber: 7)
            case 2:
                number = 7
                content = .battery(ANTBatteryStatus(level: 80, fractionalVoltage: 0x80, coarseVoltage: 2, status: .good))
            default:
                number = 1
                content = .operatingTime(seconds: 3600 * 40 + UInt32(messages / 2))
            }
        } else {
            number = 4
            content = .previousBeat(manufacturerSpecific: 0xFF, previousBeatTime: previousBeatTime)
        }
        return ANTHeartRatePage(
            toggle: toggle, pageNumber: number, beatTime: beatTime, beatCount: beatCount, computedHeartRate: rate, content: content
        ).bytes
    }
}

import ANTProtocol
import SampleBus

/// The decoders `healthgate decode` offers for ANT+ payloads.
enum ANTPayloadDecoders {
    static var all: [PayloadDecoder] {
        [
            PayloadDecoder(
                "ant-hrm", "ANT+ heart-rate monitor data page (8 bytes, pages 0-7).",
                example: "healthgate decode ant-hrm 84FF9E5A3CB14F48",
                keys: """
                    page (0-127), toggle (boolean), heartRate (bpm, null when 0), beatTime (1/1024 s, 16-bit), \
                    beatCount (8-bit), and the page's own, null where the page has none: operatingTimeSeconds (1), \
                    manufacturerId, manufacturer and serialNumber (2: upper 16 bits), hardwareVersion, softwareVersion and \
                    modelNumber (3), previousBeatTime (4, 1/1024 s) and rrInterval (4, 1/1024 s), batteryLevel (7, %, null \
                    when not sent), batteryVoltage (7, V) and batteryStatus (7)
                    """
            ) { (bytes: [UInt8]) throws(ANTDecodingError) -> NullableJSON in
                let page = try ANTHeartRatePage(bytes: bytes)
                return NullableJSON(fields(page))
            }
        ]
    }

    static func fields(_ page: ANTHeartRatePage) -> [(String, NullableJSON.Value)] {
        var operating: Int?
        var manufacturerID: Int?
        var serial: Int?
        var hardware: Int?
        var software: Int?
        var model: Int?
        var previous: Int?
        var rr: Int?
        var battery: ANTBatteryStatus?
        switch page.content {
        case .operatingTime(let seconds): operating = Int(seconds)
        case .manufacturer(let id, let number):
            manufacturerID = Int(id)
            serial = Int(number)
        case .product(let hw, let sw, let mo):
            (hardware, software, model) = (Int(hw), Int(sw), Int(mo))
        case .previousBeat(_, let time):
            previous = Int(time)
            rr = Int(page.beatTime &- time)
        case .battery(let status): battery = status
        case .defaultData, .swimInterval, .capabilities, .legacy, .unknown: break
        }
        return [
            ("page", .integer(Int(page.pageNumber))),
            ("toggle", .boolean(page.toggle)),
            ("heartRate", .integer(page.heartRate.map(Int.init))),
            ("beatTime", .integer(Int(page.beatTime))),
            ("beatCount", .integer(Int(page.beatCount))),
            ("operatingTimeSeconds", .integer(operating)),
            ("manufacturerId", .integer(manufacturerID)),
            ("manufacturer", .string(manufacturerID.map { ANTManufacturer(id: UInt16($0)).description })),
            ("serialNumber", .integer(serial)),
            ("hardwareVersion", .integer(hardware)),
            ("softwareVersion", .integer(software)),
            ("modelNumber", .integer(model)),
            ("previousBeatTime", .integer(previous)),
            ("rrInterval", .integer(rr)),
            ("batteryLevel", .integer(battery?.level.map(Int.init))),
            ("batteryVoltage", .number(battery?.voltage)),
            ("batteryStatus", .string(battery?.status.name)),
        ]
    }
}

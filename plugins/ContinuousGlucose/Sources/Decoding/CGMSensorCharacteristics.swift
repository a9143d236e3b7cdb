public import FoundationEssentials
public import GATTDecoding

/// CGM Feature (0x2AA8, CGMS 1.0.1 §3.2): what the sensor supports, its sample type and
/// location, and an E2E-CRC that is always there (0xFFFF when the sensor does not support
/// E2E-CRC).
public struct CGMFeature: Hashable, Sendable {
    /// The 24 feature bits.
    public var features: UInt32
    /// The type of sample (low nibble) and its location (high nibble).
    public var typeAndLocation: UInt8
    /// The value's CRC: `.absent` when the sensor does not support E2E-CRC and sends 0xFFFF.
    public var e2e: E2EVerdict

    /// Feature bit 12: every value the sensor sends carries an E2E-CRC, and every value written
    /// to it must.
    public var supportsE2ECRC: Bool { features & (1 << 12) != 0 }
    /// Feature bit 15: measurements carry a trend.
    public var supportsTrend: Bool { features & (1 << 15) != 0 }
    /// Feature bit 16: measurements carry a quality.
    public var supportsQuality: Bool { features & (1 << 16) != 0 }
    /// Feature bit 14: the sensor keeps several sessions.
    public var supportsMultipleSessions: Bool { features & (1 << 14) != 0 }

    static let featureNames = [
        "calibration", "patientHighLowAlerts", "hypoAlerts", "hyperAlerts", "rateOfIncreaseDecreaseAlerts",
        "deviceSpecificAlert", "sensorMalfunctionDetection", "sensorTemperatureHighLowDetection",
        "sensorResultHighLowDetection", "lowBatteryDetection", "sensorTypeErrorDetection", "generalDeviceFault", "e2eCrc",
        "multipleBond", "multipleSessions", "trend", "quality",
    ]

    /// The supported features by name, bit 0 first.
    public var featureNames: [String] {
        Self.featureNames.indices.filter { features & (1 << $0) != 0 }.map { Self.featureNames[$0] }
    }

    /// The sample type (CGMS 1.0.1 Table 3.4).
    public var type: String? {
        let names = [
            1: "capillaryWholeBlood", 2: "capillaryPlasma", 3: "venousWholeBlood", 4: "venousPlasma",
            5: "arterialWholeBlood", 6: "arterialPlasma", 7: "undeterminedWholeBlood", 8: "undeterminedPlasma",
            9: "interstitialFluid", 10: "controlSolution",
        ]
        return names[Int(typeAndLocation & 0x0F)]
    }

    /// The sample location (CGMS 1.0.1 Table 3.5).
    public var sampleLocation: String? {
        let names = [
            1: "finger", 2: "alternateSiteTest", 3: "earlobe", 4: "controlSolution", 5: "subcutaneousTissue",
            15: "notAvailable",
        ]
        return names[Int(typeAndLocation >> 4)]
    }

    public init(features: UInt32, typeAndLocation: UInt8, e2e: E2EVerdict) {
        self.features = features
        self.typeAndLocation = typeAndLocation
        self.e2e = e2e
    }
}

/// CGM Status (0x2AA9, CGMS 1.0.1 §3.3): the sensor's time offset now and its status.
public struct CGMStatus: Hashable, Sendable {
    /// Minutes since the session started, now.
    public var timeOffsetMinutes: Int
    /// The three annunciation octets (all three always present here).
    public var sensorStatus: CGMSensorStatus
    public var e2e: E2EVerdict

    public init(timeOffsetMinutes: Int, sensorStatus: CGMSensorStatus, e2e: E2EVerdict) {
        self.timeOffsetMinutes = timeOffsetMinutes
        self.sensorStatus = sensorStatus
        self.e2e = e2e
    }
}

/// CGM Session Start Time (0x2AAA, CGMS 1.0.1 §3.4): when the session started, in the local
/// time of the collector that set it, with that time's zone and daylight saving offset.
public struct CGMSessionStartTime: Hashable, Sendable {
    /// Year (0: not set), month, day, hour, minute, second as sent.
    public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    /// The time zone in 15-minute steps from UTC (-48…56); nil for -128, "unknown".
    public var timeZoneQuarterHours: Int?
    /// The daylight saving offset in 15-minute steps (0, 2, 4, 8); nil for 255, "unknown".
    public var dstQuarterHours: Int?
    public var e2e: E2EVerdict

    public init(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, timeZoneQuarterHours: Int?,
        dstQuarterHours: Int?, e2e: E2EVerdict = .absent
    ) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
        self.timeZoneQuarterHours = timeZoneQuarterHours
        self.dstQuarterHours = dstQuarterHours
        self.e2e = e2e
    }

    /// The start as UTC: the local time less the zone and the daylight saving offset. Nil when
    /// the sensor's start is not set (year, month or day 0), not a date, or its zone unknown (an
    /// unknown daylight saving offset counts as none).
    public var date: Date? {
        guard year > 0, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60,
            let zone = timeZoneQuarterHours
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let local = calendar.date(from: components), calendar.component(.day, from: local) == day else { return nil }
        return local.addingTimeInterval(-Double(zone + (dstQuarterHours ?? 0)) * 900)
    }

    /// The value a collector writes to set `date` as the start: the UTC wall clock with time zone
    /// 0 and daylight saving offset 0, whole seconds, with an E2E-CRC when the sensor wants one.
    public static func value(setting date: Date, e2e: Bool) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let year = parts.year ?? 0
        let bytes: [UInt8] = [
            UInt8(year & 0xFF), UInt8(year >> 8), UInt8(parts.month ?? 0), UInt8(parts.day ?? 0), UInt8(parts.hour ?? 0),
            UInt8(parts.minute ?? 0), UInt8(parts.second ?? 0), 0, 0,
        ]
        return e2e ? E2ECRC.appending(to: bytes) : bytes
    }
}

/// Decoders of the sensor's readable characteristics.
public enum CGMSensorDecoder {
    /// CGM Feature: uint24 features, the type and location octet, the E2E-CRC (always sent).
    /// - Throws: ``CGMDecodingError`` for a value that is not 6 octets.
    public static func feature(_ bytes: [UInt8]) throws(CGMDecodingError) -> CGMFeature {
        var reader = GATTPayloadReader(bytes, CGMCharacteristic.feature)
        let features = try reader.unsigned(3, "features")
        let typeAndLocation = try reader.uint8("typeAndSampleLocation")
        let sent = try reader.uint16("e2eCrc")
        try reader.expectEnd()
        let supported = features & (1 << 12) != 0
        let e2e: E2EVerdict =
            supported ? E2EVerdict(sent: sent, over: bytes[0..<4]) : sent == 0xFFFF ? .absent : .mismatch(sent: sent, computed: 0xFFFF)
        return CGMFeature(features: features, typeAndLocation: typeAndLocation, e2e: e2e)
    }

    /// CGM Status: uint16 time offset, the Status, Cal/Temp and Warning octets, an optional E2E-CRC.
    public static func status(_ bytes: [UInt8]) throws(CGMDecodingError) -> CGMStatus {
        var reader = GATTPayloadReader(bytes, CGMCharacteristic.status)
        let offset = Int(try reader.uint16("timeOffsetMinutes"))
        let status = CGMSensorStatus(
            status: try reader.uint8("statusOctet"), calibrationTemperature: try reader.uint8("calibrationTemperatureOctet"),
            warning: try reader.uint8("warningOctet"))
        let e2e = try E2ECRC.verdict(&reader, characteristic: .status, sizeField: "value")
        return CGMStatus(timeOffsetMinutes: offset, sensorStatus: status, e2e: e2e)
    }

    /// CGM Session Start Time: Date Time (7 octets), Time Zone (sint8), DST Offset (uint8), an
    /// optional E2E-CRC.
    public static func sessionStartTime(_ bytes: [UInt8]) throws(CGMDecodingError) -> CGMSessionStartTime {
        var reader = GATTPayloadReader(bytes, CGMCharacteristic.sessionStartTime)
        let year = Int(try reader.uint16("year"))
        let month = Int(try reader.uint8("month"))
        let day = Int(try reader.uint8("day"))
        let hour = Int(try reader.uint8("hours"))
        let minute = Int(try reader.uint8("minutes"))
        let second = Int(try reader.uint8("seconds"))
        let zone = Int(try reader.signed(1, "timeZone"))
        let dst = Int(try reader.uint8("dstOffset"))
        let e2e = try E2ECRC.verdict(&reader, characteristic: .sessionStartTime, sizeField: "value")
        return CGMSessionStartTime(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second,
            timeZoneQuarterHours: zone == -128 ? nil : zone, dstQuarterHours: dst == 255 ? nil : dst, e2e: e2e)
    }

    /// CGM Session Run Time: the hours the session is expected to run (uint16), an optional
    /// E2E-CRC.
    public static func sessionRunTime(_ bytes: [UInt8]) throws(CGMDecodingError) -> (hours: Int, e2e: E2EVerdict) {
        var reader = GATTPayloadReader(bytes, CGMCharacteristic.sessionRunTime)
        let hours = Int(try reader.uint16("hours"))
        return (hours, try E2ECRC.verdict(&reader, characteristic: .sessionRunTime, sizeField: "value"))
    }
}

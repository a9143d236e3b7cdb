import BLETesting
import GATTDecoding
import GenericHealthSensor

/// The observations of STMicroelectronics' STM32WBA Generic Health Sensor sample
/// (github.com/stm32-hotspot/STM32WBA-BLE-GenericHealthSensor,
/// Projects/NUCLEO-WBA55CG/Applications/BLE/BLE_GenericHealthSensor/STM32_WPAN/App/ghs_app.c),
/// byte for byte, one field per group as the sample comments them, with what each decodes to.
/// The sample's length fields count the bytes after the length field.
enum STFixtures {
    /// The time stamp every fixture that has one carries: flags 0x22 (UTC, current timeline,
    /// one-second resolution, no TZ/DST offset), 0x292B9D72 s since 2000, cellular network.
    static let timestamp = GHSTimestamp(flags: 0x22, value: 0x292B_9D72, timeSource: .cellularNetwork, offsetQuarterHours: 0)

    // MDC codes the fixtures use.
    static let spo2: UInt32 = 0x0002_4BB8  // MDC_PULS_OXIM_SAT_O2, 150456
    static let pulseRate: UInt32 = 0x0002_481A  // MDC_PULS_OXIM_PULS_RATE, 149530
    static let spotModality: UInt32 = 0x0002_4C3C  // MDC_MODALITY_SPOT, 150588
    static let bloodPressure: UInt32 = 0x0002_4A04  // MDC_PRESS_BLD_NONINV, 150020
    static let bloodPressureStatus: UInt32 = 0x0080_55F0  // the sample's "MDC_BLP_MEASUREMENT STATUS"
    static let percent: UInt16 = 0x0220  // MDC_DIM_PER_CENT, 544
    static let beatsPerMinute: UInt16 = 0x0AA0  // MDC_DIM_BEAT_PER_MIN, 2720
    static let millimetresOfMercury: UInt16 = 0x0F20  // MDC_DIM_MMHG, 3872
    static let millivolt: UInt16 = 0x10B2  // MDC_DIM_MILLI_VOLT, 4274

    /// ghs_app.c, `NumericOxygenSaturation`: SpO2 98 % with time stamp, patient and modality.
    static let numericOxygenSaturation = hexBytes(
        """
        01 1B00 6300 B84B0200 22 729D2B290000 06 00 01 01 3C4C0200 2002 62000000
        """)
    static let numericOxygenSaturationDecoded = GHSObservation(
        type: spo2, timestamp: timestamp, patient: 1, supplementalInformation: [spotModality],
        value: .numeric(unit: percent, value: .value(98)))

    /// ghs_app.c, `SimpleDiscreteObservation`.
    static let simpleDiscreteObservation = hexBytes(
        """
        02 1800 4300 B84B0200 22 729D2B290000 06 00 01 3C4C0200 62000000
        """)
    static let simpleDiscreteObservationDecoded = GHSObservation(
        type: spo2, timestamp: timestamp, supplementalInformation: [spotModality], value: .simpleDiscrete(98))

    /// ghs_app.c, `StringObservation`: "Man".
    static let stringObservation = hexBytes("03 0700 0000 0300 4D616E")
    static let stringObservationDecoded = GHSObservation(value: .string("Man"))

    /// ghs_app.c, `SampleArrayObservation`. The sample comments the scale factor as 1.612, but
    /// its bytes 4C 06 00 00 are mantissa 1612 with exponent 0: the bytes decode to 1612. Ten
    /// one-byte samples (the sample's comment pairs them as 0x07F9, …).
    static let sampleArrayObservation = hexBytes(
        """
        04 2000 0000 B210 4C060000 00080000 0A0000FD 01 01 0A000000 F907FB07F507FF070C08
        """)
    static let sampleArrayObservationDecoded = GHSObservation(
        value: .sampleArray(
            GHSSampleArray(
                unit: millivolt, scaleFactor: .value(1612), offset: .value(2048), samplePeriod: .value(0.01),
                samplesPerPeriod: 1, bytesPerSample: 1, samples: [0xF9, 0x07, 0xFB, 0x07, 0xF5, 0x07, 0xFF, 0x07, 0x0C, 0x08])))

    /// ghs_app.c, `TLVEncodedObservation`: three entries of format uint8 (0x04) whose length (3)
    /// counts the value only, the format octet not included.
    static let tlvEncodedObservation = hexBytes(
        """
        08 2100 0000 03
        B84B0200 0300 04 620000
        B84B0200 0300 04 630000
        B84B0200 0300 04 640000
        """)
    static let tlvEncodedObservationDecoded = GHSObservation(
        value: .tlvEncoded([
            GHSTLV(type: spo2, format: 0x04, bytes: [0x62, 0, 0]), GHSTLV(type: spo2, format: 0x04, bytes: [0x63, 0, 0]),
            GHSTLV(type: spo2, format: 0x04, bytes: [0x64, 0, 0]),
        ]))

    /// ghs_app.c, `CompoundObservationBloodPressure`: 100/60 mmHg, mean 80.
    static let compoundObservationBloodPressure = hexBytes(
        """
        07 3500 1300 044A0200 22 729D2B290000 06 00 40E20100 03
        054A0200 01 200F 64000000
        064A0200 01 200F 3C000000
        074A0200 01 200F 50000000
        """)
    static let compoundObservationBloodPressureDecoded = GHSObservation(
        type: bloodPressure, timestamp: timestamp, objectID: 123_456,
        value: .compound([
            GHSCompoundComponent(type: 0x0002_4A05, unit: millimetresOfMercury, value: .value(100)),
            GHSCompoundComponent(type: 0x0002_4A06, unit: millimetresOfMercury, value: .value(60)),
            GHSCompoundComponent(type: 0x0002_4A07, unit: millimetresOfMercury, value: .value(80)),
        ]))

    /// ghs_app.c, `CompoundDiscreteBloodPressureStatus` (class 0x05): cuff loose (3::240),
    /// cuff improperly placed (3::430), derived from object 123456.
    static let compoundDiscreteBloodPressureStatus = hexBytes(
        """
        05 1400 8100 F0558000 01 40E20100 02 F0000300 AE010300
        """)
    static let compoundDiscreteBloodPressureStatusDecoded = GHSObservation(
        type: bloodPressureStatus, derivedFrom: [123_456], value: .compoundDiscreteEvent([0x0003_00F0, 0x0003_01AE]))

    /// ghs_app.c, `CompoundDiscreteEvent`: despite its name, class 0x06, a compound state/event
    /// observation with bit strings of four bytes.
    static let compoundDiscreteEvent = hexBytes(
        """
        06 1800 8100 F0558000 01 40E20100 04 FFFFFFFF FFFFFFFF F0000300
        """)
    static let compoundDiscreteEventDecoded = GHSObservation(
        type: bloodPressureStatus, derivedFrom: [123_456],
        value: .compoundStateEvent(
            GHSStateEvent(
                supportedMask: [0xFF, 0xFF, 0xFF, 0xFF], stateMask: [0xFF, 0xFF, 0xFF, 0xFF], value: [0xF0, 0x00, 0x03, 0x00])))

    /// ghs_app.c, `ObservationBundle`: SpO2 and pulse rate with the bundle's time stamp; each
    /// member's length (12) also counts the bytes after its length field.
    static let observationBundle = hexBytes(
        """
        FF 2F00 4200 22 729D2B290000 06 00 01 3C4C0200 02
        01 0C00 0100 B84B0200 2002 62000000
        01 0C00 0100 1A480200 A00A 62000000
        """)
    /// Where the bundle's members start.
    static let observationBundleMemberOffsets = [20, 35]
    static let observationBundleDecoded = GHSObservation(
        timestamp: timestamp, supplementalInformation: [spotModality],
        value: .bundle([
            GHSObservation(type: spo2, value: .numeric(unit: percent, value: .value(98))),
            GHSObservation(type: pulseRate, value: .numeric(unit: beatsPerMinute, value: .value(98))),
        ]))

    /// ghs_app.c, `SimpleArrayECGWaveform`: inconsistent. Its length field says 151, 264 bytes
    /// follow it, and its number of samples is one byte (0x74, 116) where GHS has four.
    static let simpleArrayECGWaveform = hexBytes(
        """
        04 9700 0300 01010200 22 729D2B290000 06 00 B210 4C060000 00080000 0A0000FD 01 02 74
        F907FB07F507FF070C080E080308E707DE07EB07F207F107F807FF07FF0705080A0810080B080F080D0804080508F607AE075D075C07
        D9075108760859083608 26081D08130813080C080B080E080E080C080908FD07FF0709080608FA07ED07EB07E207D707CB07D107DC07
        E807F70714082C083F084D085308640859085A08500850084308330831083008350835082B0819081C081D082408210828082C0816
        0815081A081D081B08140810080C080E081A081B081A081B080F080A080A081008100816081A0813080C080E080F080D080B080008
        04080108000803080B080B0812081D081908
        """)

    /// Every consistent fixture with what it decodes to, by its array name.
    static let valid: [(name: String, bytes: [UInt8], decoded: GHSObservation, memberOffsets: [Int])] = [
        ("NumericOxygenSaturation", numericOxygenSaturation, numericOxygenSaturationDecoded, []),
        ("SimpleDiscreteObservation", simpleDiscreteObservation, simpleDiscreteObservationDecoded, []),
        ("StringObservation", stringObservation, stringObservationDecoded, []),
        ("SampleArrayObservation", sampleArrayObservation, sampleArrayObservationDecoded, []),
        ("TLVEncodedObservation", tlvEncodedObservation, tlvEncodedObservationDecoded, []),
        ("CompoundObservationBloodPressure", compoundObservationBloodPressure, compoundObservationBloodPressureDecoded, []),
        (
            "CompoundDiscreteBloodPressureStatus", compoundDiscreteBloodPressureStatus,
            compoundDiscreteBloodPressureStatusDecoded, []
        ),
        ("CompoundDiscreteEvent", compoundDiscreteEvent, compoundDiscreteEventDecoded, []),
        ("ObservationBundle", observationBundle, observationBundleDecoded, observationBundleMemberOffsets),
    ]

    /// `bytes` re-encoded as Philips' GHS simulator writes objects (`withLengthPrefix`: the
    /// length counts the whole object), the object's length and its members' each three more.
    static func wholeObjectLengths(_ bytes: [UInt8], memberOffsets: [Int]) -> [UInt8] {
        var bytes = bytes
        for start in [0] + memberOffsets {
            let length = (Int(bytes[start + 1]) | Int(bytes[start + 2]) << 8) + 3
            bytes[start + 1] = UInt8(length & 0xFF)
            bytes[start + 2] = UInt8(length >> 8)
        }
        return bytes
    }
}

import GatewayRuntime
import HealthModel

// Each message with every key set (``AdapterMessageBody/example``), as docs/adapter-protocol.md's
// session shows them.

extension AdapterHello {
    public static var example: Self { AdapterHello(adapter: "cuff-csv", version: "1.0") }
}

extension DeviceMessage {
    public static var example: Self {
        var device = DeviceMessage(id: "BP-7741", name: "Clinic cuff", manufacturer: "Acme", model: "BP-7", serialNumber: "7741")
        device.hardwareVersion = "2"
        device.firmwareVersion = "1.4.0"
        device.softwareVersion = "1.4"
        return device
    }
}

extension QuantityMessage {
    public static var example: Self {
        QuantityMessage(
            .heartRate, value: 64, unit: .countPerMinute, start: "2026-11-30T08:15:00Z", end: "2026-11-30T08:15:30Z",
            id: "BP-7741/2026-11-30T08:15:00Z/pulse", version: 1, device: "BP-7741", metadata: ["wasUserEntered": false])
    }
}

extension CorrelationMember {
    static var example: [CorrelationMember] {
        var systolic = CorrelationMember(.bloodPressureSystolic, value: 128, unit: .millimeterOfMercury)
        systolic.start = "2026-11-30T08:15:00Z"
        systolic.end = "2026-11-30T08:15:30Z"
        return [systolic, CorrelationMember(.bloodPressureDiastolic, value: 82, unit: .millimeterOfMercury)]
    }
}

extension CorrelationMessage {
    public static var example: Self {
        var reading = CorrelationMessage(
            .bloodPressure, start: "2026-11-30T08:15:00Z", members: CorrelationMember.example, id: "BP-7741/2026-11-30T08:15:00Z",
            device: "BP-7741")
        reading.end = "2026-11-30T08:15:30Z"
        reading.version = 1
        reading.metadata = ["cuffSize": "M"]
        return reading
    }
}

extension HeartbeatsMessage {
    public static var example: Self {
        var series = HeartbeatsMessage(
            start: "2026-11-30T08:15:00Z", beats: [Beat(offset: 0), Beat(offset: 0.82), Beat(offset: 2.61, gap: true)], id: "H10-1/2026-11-30T08:15:00Z",
            device: "H10-1")
        series.version = 1
        series.metadata = ["position": "chest"]
        return series
    }
}

extension CheckpointMessage {
    public static var example: Self { CheckpointMessage(state: ["files": ["2026-11-27-clinic.csv": 4]]) }
}

extension LogMessage {
    public static var example: Self { LogMessage("2026-11-27-clinic.csv line 6: no date", level: .warning, device: "BP-7741") }
}

extension StatusMessage {
    public static var example: Self { StatusMessage(state: "watching /srv/cuff-exports", detail: "2 files, 7 rows sent") }
}

extension GatewayHello {
    public static var example: Self {
        GatewayHello(
            gateway: "healthgate", name: "clinic-cuff", config: ["folder": "/srv/cuff-exports"],
            checkpoint: ["files": ["2026-11-27-clinic.csv": 4]], maxLineBytes: AdapterProtocol.defaultMaxLineBytes)
    }
}

extension AckMessage {
    public static var example: Self { AckMessage(state: ["files": ["2026-11-27-clinic.csv": 4]]) }
}

extension RefusedMessage {
    public static var example: Self {
        RefusedMessage(line: 5, reason: #"unit "count/min" does not fit bodyMass, which is measured in kg or another unit of its dimension"#, id: "S-1/4")
    }
}

extension ErrorMessage {
    public static var example: Self { ErrorMessage(reason: "line 7: not JSON: unexpected end of input", fatal: false) }
}

extension StopMessage {
    public static var example: Self { StopMessage() }
}

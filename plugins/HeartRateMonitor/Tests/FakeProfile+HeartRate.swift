import BLEProfileKit
import BLETesting
import BLETransport
import GatewayTesting

extension FakeProfile {
    static func heartRateMonitor(
        address: String = "C0:FF:EE:00:00:01", name: String = "Polar H10 1234", serial: String = "A1B2C3D4",
        controlPoint: Bool = true, batteryService: Bool = true
    ) -> FakeProfile {
        var characteristics: [BluetoothUUID: [BluetoothUUID]] = [
            .heartRateService: [.heartRateMeasurement, .bodySensorLocation] + (controlPoint ? [.heartRateControlPoint] : []),
            .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber, .firmwareRevision],
        ]
        if batteryService { characteristics[.batteryService] = [.batteryLevel] }
        return FakeProfile(
            address: address, name: name, services: [.heartRateService],
            characteristics: characteristics,
            values: [
                .manufacturerName: Array("Polar Electro Oy".utf8), .modelNumber: Array("H10\0".utf8),
                .serialNumber: Array(serial.utf8), .firmwareRevision: Array("3.1.1".utf8),
                .batteryLevel: [0x4D], .bodySensorLocation: [0x01],
            ],
            stackBattery: 55)
    }

    static func footPod(address: String = "C0:FF:EE:00:00:02") -> FakeProfile {
        FakeProfile(
            address: address, name: "Stryd", services: [.runningSpeedAndCadenceService],
            characteristics: [.runningSpeedAndCadenceService: [.rscMeasurement]], values: [:], stackBattery: 90)
    }
}

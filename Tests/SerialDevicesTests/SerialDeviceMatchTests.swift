import HealthModel
import SerialDevices
import Udev
import XCTest

/// Which ttys a member reads: the properties our udev rules set (udev-rules/*.rules).
final class SerialDeviceMatchTests: XCTestCase {
    let pedometer = SerialDeviceMatch(
        kind: "serial-pedometer", protocols: ["hgp1"], defaultProtocol: "hgp1", rulesFile: "70-healthgate-pedometer.rules")
    let scale = SerialDeviceMatch(
        kind: "serial-scale", protocols: ["scale1", "scale2"], defaultProtocol: "scale1", rulesFile: "70-healthgate-scale.rules")

    func tty() -> UdevDevice {
        UdevDevice(syspath: "/sys/devices/pci0000:00/usb1/1-1/1-1:1.0/tty/ttyACM0", sysname: "ttyACM0", devnode: "/dev/ttyACM0")
    }

    func testEligibilityFollowsOurRulesProperties() {
        var device = tty()
        XCTAssertFalse(pedometer.eligibility(of: device).eligible)
        XCTAssertEqual(pedometer.eligibility(of: device).reason, "not tagged by 70-healthgate-pedometer.rules (no HEALTHGATE_ADAPTER)")
        device.properties["HEALTHGATE_ADAPTER"] = "serial-pedometer"
        XCTAssertEqual(pedometer.eligibility(of: device), SerialDeviceEligibility(eligible: true, reason: "HEALTHGATE_ADAPTER=serial-pedometer, decoder hgp1"))
        device.properties["HEALTHGATE_DECODER"] = "hgp1"
        XCTAssertTrue(pedometer.eligibility(of: device).eligible)
        device.properties["HEALTHGATE_DECODER"] = "future"
        XCTAssertEqual(pedometer.protocolName(of: device), "future")
        XCTAssertEqual(pedometer.eligibility(of: device).reason, "HEALTHGATE_DECODER=future is not a compiled-in protocol")
        device.properties["HEALTHGATE_ADAPTER"] = "ble-heart-rate"
        XCTAssertTrue(pedometer.eligibility(of: device).reason.contains("another plugin"))
        device.devnode = nil
        XCTAssertEqual(pedometer.eligibility(of: device), SerialDeviceEligibility(eligible: false, reason: "no device node"))
    }

    func testAmongSeveralMembersTheTaggedOneDecides() {
        var device = tty()
        let untagged = SerialDeviceMatch.eligibility(of: device, among: [pedometer, scale])
        XCTAssertEqual(
            untagged.reason, "not tagged by 70-healthgate-pedometer.rules or 70-healthgate-scale.rules (no HEALTHGATE_ADAPTER)")
        device.properties["HEALTHGATE_ADAPTER"] = "serial-scale"
        XCTAssertEqual(
            SerialDeviceMatch.eligibility(of: device, among: [pedometer, scale]),
            SerialDeviceEligibility(eligible: true, reason: "HEALTHGATE_ADAPTER=serial-scale, decoder scale1"))
        device.properties["HEALTHGATE_ADAPTER"] = "serial-thermometer"
        XCTAssertTrue(SerialDeviceMatch.eligibility(of: device, among: [pedometer, scale]).reason.contains("another plugin"))
        // One member: exactly that member's words, as `healthgate devices` printed them before.
        XCTAssertEqual(SerialDeviceMatch.eligibility(of: tty(), among: [pedometer]), pedometer.eligibility(of: tty()))
        XCTAssertFalse(SerialDeviceMatch.eligibility(of: tty(), among: []).eligible)
    }

    func testTheTransportIdentityIsUdevs() {
        var device = tty()
        XCTAssertEqual(SerialDeviceDiscovery.transportDevice(device).localIdentifier, "/dev/ttyACM0")
        device.properties["ID_SERIAL"] = "healthgate_StepSim_SIM-0001"
        device.properties["ID_MODEL"] = "StepSim"
        let identity = SerialDeviceDiscovery.transportDevice(device)
        XCTAssertEqual(identity.localIdentifier, "healthgate_StepSim_SIM-0001")
        XCTAssertEqual(identity.name, "StepSim (ttyACM0)")
    }
}

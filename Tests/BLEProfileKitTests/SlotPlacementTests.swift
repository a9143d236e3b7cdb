import AsyncPrimitives
import BLEProfileKit
import BLETesting
import BLETransport
import GatewayRuntime
import GatewayTesting
import SampleBus
import XCTest

/// Devices spread over several adapters by their device slots: a device goes to an adapter that
/// reports it and has a free slot, the one with the fewest slots in use; with every such adapter
/// full it waits, reported once, shown in each adapter's status line, and is followed as soon as
/// a slot comes free, with no discovery event and no retry loop.
final class SlotPlacementTests: XCTestCase {
    /// A source that runs a ``PeripheralSupervisor`` over scripted adapters: each followed device
    /// records the adapter it was given and is followed until the test lets it go.
    private struct SupervisedSource: SampleSource {
        let radios: [PeripheralSupervisor.Radio]
        let followed: AsyncCondition<[String: String]>
        let letGo: AsyncCondition<Set<String>>

        func run(context: SourceContext) async throws {
            let supervisor = PeripheralSupervisor(
                radios: radios, filter: DeviceFilter(services: [.heartRateService], selection: .any), maxDevices: 16,
                retry: ReconnectPolicy())
            try await supervisor.run(context: context) { [followed, letGo] session in
                followed.update { $0[session.key] = session.scheduler.adapter }
                try await letGo.wait { $0.contains(session.key) }
            }
        }
    }

    private final class Rig: Sendable {
        let transports: [FakeBLETransport]
        let schedulers: [AdapterScheduler]
        let followed = AsyncCondition<[String: String]>([:])
        let letGo = AsyncCondition<Set<String>>([])
        let harness: SourceHarness

        init(adapters: [String], connections: Int) throws {
            let clock = ManualClock()
            let transports = adapters.map { _ in FakeBLETransport(profiles: [], clock: clock) }
            let schedulers = adapters.map { AdapterScheduler(adapter: $0, limits: AdapterScheduler.Limits(connections: connections), clock: clock) }
            self.transports = transports
            self.schedulers = schedulers
            let radios = zip(transports, schedulers).map { PeripheralSupervisor.Radio(transport: $0, scheduler: $1, watched: false) }
            let followed = self.followed
            let letGo = self.letGo
            harness = try SourceHarness(name: "straps", kind: "ble-heart-rate", clock: clock) { _ in
                SupervisedSource(radios: radios, followed: followed, letGo: letGo)
            }
        }

        /// Adapter `index` reports the strap `number`.
        func found(_ number: Int, on index: Int) {
            transports[index].emit(.found(DiscoveredPeripheral(
                address: Self.address(number), name: "Strap \(number)", serviceUUIDs: [.heartRateService])))
        }

        static func address(_ number: Int) -> String { "AA:00:00:00:00:0\(number)" }

        func adapter(of number: Int) -> String? { followed.value[Self.address(number)] }

        func line(_ adapter: String) -> String { harness.current.details["adapter.\(adapter)"] ?? "" }

        var waitingNotices: [String] {
            harness.logs.entries.map(\.message).filter { $0.hasPrefix("not following") }
        }
    }

    /// Three adapters with one slot each. A strap only a full adapter reports waits (one notice,
    /// listed in that adapter's status line, its own state says so), and is followed on the
    /// first adapter with a free slot that reports it; a strap two full adapters report waits
    /// until one of them gives its slot back, and is then followed there at once.
    func testAStrapWaitsForAFreeSlotAndTakesItWhenOneFrees() async throws {
        let rig = try Rig(adapters: ["hci0", "hci1", "hci2"], connections: 1)
        try await rig.harness.run { harness in
            try await waitUntil(timeout: .seconds(20), "discovery on every adapter") { rig.transports.allSatisfy { $0.discoverCalls == 1 } }
            rig.found(1, on: 0)
            try await harness.waitFor("strap 1 followed") { rig.adapter(of: 1) == "hci0" }

            rig.found(2, on: 0)
            try await harness.waitFor("strap 2 waits on hci0") {
                rig.line("hci0").contains("1 waiting for a slot (\(Rig.address(2)))")
            }
            XCTAssertNil(rig.adapter(of: 2), "hci0 is full")
            XCTAssertEqual(harness.current.details["\(Rig.address(2)).state"], "waiting for a device slot (hci0 1/1)")
            rig.found(2, on: 0)
            rig.found(2, on: 1)
            try await harness.waitFor("strap 2 followed on hci1") { rig.adapter(of: 2) == "hci1" }
            try await harness.waitFor("hci0 lists no waiting strap") { !rig.line("hci0").contains("waiting for a slot") }

            rig.found(3, on: 0)
            rig.found(3, on: 1)
            try await harness.waitFor("strap 3 waits on both") {
                rig.line("hci0").contains("waiting for a slot (\(Rig.address(3)))")
                    && rig.line("hci1").contains("waiting for a slot (\(Rig.address(3)))")
            }
            XCTAssertFalse(rig.line("hci2").contains("waiting for a slot"), "hci2 does not hear strap 3")
            XCTAssertEqual(harness.current.details["\(Rig.address(3)).state"], "waiting for a device slot (hci0 1/1, hci1 1/1)")
            XCTAssertNil(rig.adapter(of: 3))

            // Strap 2 is no longer followed: hci1's slot is free, and strap 3 takes it with no new report.
            rig.letGo.update { $0.insert(Rig.address(2)) }
            try await harness.waitFor("strap 3 followed on hci1") { rig.adapter(of: 3) == "hci1" }
            try await harness.waitFor("no adapter lists strap 3") {
                !rig.line("hci0").contains("waiting for a slot") && !rig.line("hci1").contains("waiting for a slot")
            }
        }
        let notices = rig.waitingNotices
        XCTAssertEqual(notices.count, 2, "one notice per strap that waited: \(notices)")
        XCTAssertTrue(
            notices.contains { $0.hasPrefix("not following \(Rig.address(3)) yet: the adapter that hears it is full (hci0 1/1 device slots") },
            "\(notices)")
        XCTAssertTrue(rig.harness.logs.contains("following \(Rig.address(3)) on hci1 (after waiting for a device slot)"))
        XCTAssertEqual(rig.transports.map { $0.discoverCalls }, [1, 1, 1], "discovery was never restarted")
    }

    /// A slot given back by another source's device wakes a waiting strap too: the slots are
    /// the adapter's, shared.
    func testASlotFreedByAnotherSourceWakesAWaitingStrap() async throws {
        let rig = try Rig(adapters: ["hci0", "hci1"], connections: 2)
        // Another source holds both of hci0's slots.
        XCTAssertTrue(rig.schedulers[0].claimSlot())
        XCTAssertTrue(rig.schedulers[0].claimSlot())
        try await rig.harness.run { harness in
            try await waitUntil(timeout: .seconds(20), "discovery on every adapter") { rig.transports.allSatisfy { $0.discoverCalls == 1 } }
            rig.found(1, on: 0)
            try await harness.waitFor("strap 1 waits") { rig.line("hci0").contains("1 waiting for a slot") }
            rig.schedulers[0].releaseSlot()
            try await harness.waitFor("strap 1 followed on hci0") { rig.adapter(of: 1) == "hci0" }
            XCTAssertTrue(rig.line("hci0").hasPrefix("2/2 devices"), rig.line("hci0"))
        }
    }

    /// A waiting strap no adapter reports any more waits no longer: a slot that frees later
    /// does not follow it.
    func testAWaitingStrapThatIsGoneIsForgotten() async throws {
        let rig = try Rig(adapters: ["hci0"], connections: 1)
        try await rig.harness.run { harness in
            try await waitUntil(timeout: .seconds(20), "discovery") { rig.transports[0].discoverCalls == 1 }
            rig.found(1, on: 0)
            try await harness.waitFor("strap 1 followed") { rig.adapter(of: 1) == "hci0" }
            rig.found(2, on: 0)
            try await harness.waitFor("strap 2 waits") { rig.line("hci0").contains("1 waiting for a slot") }
            rig.transports[0].emit(.lost(address: Rig.address(2)))
            try await harness.waitFor("strap 2 no longer waits") { !rig.line("hci0").contains("waiting for a slot") }
            XCTAssertNil(harness.current.details["\(Rig.address(2)).state"])
            rig.letGo.update { $0.insert(Rig.address(1)) }
            try await harness.waitFor("hci0's slot is free") { rig.schedulers[0].hasFreeSlot }
            rig.found(3, on: 0)
            try await harness.waitFor("strap 3 followed") { rig.adapter(of: 3) == "hci0" }
            XCTAssertNil(rig.adapter(of: 2), "the strap that left is not followed")
        }
    }

    /// The adapter order for a strap several adapters report: the fewest slots in use first,
    /// then the fewest links, then the configured order.
    func testTheAdapterWithTheFewestSlotsInUseIsPreferred() {
        let clock = ManualClock()
        let schedulers = (0..<3).map { AdapterScheduler(adapter: "hci\($0)", limits: AdapterScheduler.Limits(connections: 5), clock: clock) }
        for _ in 0..<3 { XCTAssertTrue(schedulers[0].claimSlot()) }
        XCTAssertTrue(schedulers[1].claimSlot())
        XCTAssertTrue(schedulers[2].claimSlot())
        XCTAssertEqual(PeripheralSupervisor.adapterPreference(of: [0, 1, 2]) { schedulers[$0].snapshot }, [1, 2, 0])
        XCTAssertEqual(PeripheralSupervisor.adapterPreference(of: [0, 2]) { schedulers[$0].snapshot }, [2, 0])
    }
}

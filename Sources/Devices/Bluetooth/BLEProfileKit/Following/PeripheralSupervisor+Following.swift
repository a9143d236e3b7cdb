import AsyncPrimitives
import BLETransport
import GatewayRuntime
import SampleBus

extension PeripheralSupervisor {
    /// The discovery loop's bookkeeping: the devices followed (and on which adapter), those
    /// waiting for a device slot, the adapters without Bluetooth. Each report in; out, the work
    /// of every device it starts following, for the loop to run as a child task. The decisions
    /// and their log and status lines are here; the loop only feeds reports and starts tasks.
    struct Following {
        let supervisor: PeripheralSupervisor
        let context: SourceContext
        let follow: Follow
        private var followed: [String: (presence: AsyncCondition<Bool>, radio: Int)] = [:]
        private var waiting = SlotWaitingList()
        /// The adapters without Bluetooth: with none left to work on, the source is waiting.
        private var unavailable: Set<Int> = []

        init(supervisor: PeripheralSupervisor, context: SourceContext, follow: @escaping Follow) {
            self.supervisor = supervisor
            self.context = context
            self.follow = follow
        }

        private var radios: [Radio] { supervisor.radios }

        /// Acts on `report`. Returns the work of the devices it starts following.
        mutating func take(_ report: Report) -> [@Sendable () async throws -> Void] {
            switch report {
            case .unavailable(let index, let message):
                context.status.setDetail(supervisor.detailKey("bluetooth", index), "unavailable")
                context.status.reportError("no Bluetooth\(supervisor.adapterSuffix(index)): \(message)", at: context.clock.now())
                unavailable.insert(index)
                if unavailable.count == radios.count {
                    context.status.waiting(for: "Bluetooth\(supervisor.adapterSuffix(index)): \(message)")
                }
            case .available(let index):
                context.status.setDetail(supervisor.detailKey("bluetooth", index), nil)
                context.status.clearError()
                unavailable.remove(index)
                context.status.waiting(for: nil)
            case .event(.found(let peripheral), let index):
                return found(peripheral, on: index).map { [$0] } ?? []
            case .slotFreed(let index):
                var started: [@Sendable () async throws -> Void] = []
                for address in waiting.addresses where waiting.entry(address)?.heardOn.contains(index) == true {
                    guard followed.count < supervisor.maxDevices, radios[index].scheduler.hasFreeSlot else { break }
                    if let work = place(address) { started.append(work) }
                }
                return started
            case .event(.lost(let address), let index):
                lost(address.uppercased(), on: index)
            }
            return []
        }

        /// An adapter reports `peripheral`: a followed device is present again; a new one the
        /// filter accepts is followed, or waits for a slot.
        private mutating func found(_ peripheral: DiscoveredPeripheral, on index: Int) -> (@Sendable () async throws -> Void)? {
            radios[index].scheduler.sawAdvertisement()
            let address = peripheral.address.uppercased()
            if let entry = followed[address] {
                if entry.radio == index { entry.presence.set(true) }
                return nil
            }
            guard supervisor.filter.matches(peripheral) else { return nil }
            guard followed.count < supervisor.maxDevices else {
                context.logger.debug(
                    "ignoring \(address): already following \(String(count: supervisor.maxDevices, "device"))",
                    device: peripheral.name ?? address)
                return nil
            }
            let before = waiting.entry(address)?.heardOn ?? []
            let began = waiting.heard(peripheral, address: address, on: index)
            // Known and waiting, reported again by an adapter already counted: nothing changed.
            if !began, before.contains(index) { return nil }
            if let work = place(address) { return work }
            // Logged once per device; a further full adapter that hears it joins the status.
            reportWaiting(address, log: began)
            return nil
        }

        /// An adapter no longer reports `key`: a followed device is absent; a waiting one no
        /// longer waits on that adapter.
        private mutating func lost(_ key: String, on index: Int) {
            if let entry = followed[key], entry.radio == index {
                entry.presence.set(false)
                context.logger.info("\(key) is no longer discovered", device: key)
            } else if waiting.entry(key) != nil {
                radios[index].scheduler.waitsForSlot(key, false)
                radios[index].scheduler.publish(to: context.status)
                if waiting.lost(key, on: index) {
                    context.status.setDetail("\(key).state", nil)
                    context.logger.info("\(key) is no longer discovered; it waits for a slot no more", device: key)
                }
            }
        }

        /// Follows the waiting device `address` on its preferred adapter with a free slot.
        /// Returns its work; nil when every adapter that reports it is full.
        private mutating func place(_ address: String) -> (@Sendable () async throws -> Void)? {
            guard let entry = waiting.entry(address) else { return nil }
            let radios = radios
            let order = PeripheralSupervisor.adapterPreference(of: entry.heardOn) { radios[$0].scheduler.snapshot }
            guard let index = order.first(where: { radios[$0].scheduler.claimSlot() }) else { return nil }
            let waited = radios.indices.contains { radios[$0].scheduler.snapshot.waitingForSlot.contains(address) }
            for radio in entry.heardOn { radios[radio].scheduler.waitsForSlot(address, false) }
            waiting.remove(address)
            let scheduler = radios[index].scheduler
            let peripheral = entry.peripheral
            let presence = AsyncCondition(true)
            followed[address] = (presence, index)
            let session = PeripheralSession(
                peripheral: peripheral, transport: radios[index].transport, scheduler: scheduler,
                context: context, reconnect: supervisor.retry, presence: presence,
                pairing: supervisor.filter.matcher(for: peripheral)?.pairing)
            context.logger.info(
                "following \(address)\(supervisor.adapterSuffix(index))\(waited ? " (after waiting for a device slot)" : "")",
                device: PeripheralSupervisor.displayName(of: peripheral))
            for radio in radios { radio.scheduler.publish(to: context.status) }
            let context = context, follow = follow
            return {
                defer {
                    scheduler.releaseSlot()
                    scheduler.publish(to: context.status)
                }
                try await follow(session)
            }
        }

        /// Shows that `address` waits (every adapter that reports it is full) in those adapters'
        /// status lines and its own state; `log`: says so in the log too (once per device).
        private func reportWaiting(_ address: String, log: Bool) {
            guard let entry = waiting.entry(address) else { return }
            let full = entry.heardOn.sorted().map { index -> String in
                let scheduler = radios[index].scheduler
                scheduler.waitsForSlot(address, true)
                scheduler.publish(to: context.status)
                return "\(scheduler.adapter) \(scheduler.snapshot.devices)/\(scheduler.limits.connections)"
            }
            let adapters = entry.heardOn.count == 1 ? "the adapter that hears it is" : "every adapter that hears it is"
            if log {
                context.logger.notice(
                    "not following \(address) yet: \(adapters) full (\(full.joined(separator: ", ")) device slots, "
                        + "bluetooth.adapterLimits.connections); it is followed when a slot comes free",
                    device: PeripheralSupervisor.displayName(of: entry.peripheral))
            }
            context.status.setDetail("\(address).state", "waiting for a device slot (\(full.joined(separator: ", ")))")
        }
    }
}

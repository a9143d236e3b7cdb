import Foundation
import HealthModel
import SampleBus
import GatewayRuntime
import SerialPedometer

/// A decoder-level simulation of serial pedometers for the latency benchmark: each device sends
/// one HGP/1 `ST` line per second (with a checksum, as devices do), spread evenly over the second.
/// Each line goes through the real stream decoder (line framer + HGP/1 decoder) and the real
/// ``StepCounter``, then becomes `stepCount` (and `distanceWalkingRunning`) samples ending at the
/// moment the line's bytes were made, published on the bus. What it leaves out is the tty and
/// its DispatchSource (the plugin's own tests cover those on real pseudo-terminals).
struct SimulatedPedometers: SampleSource {
    let count: Int
    let ids: SampleIDGenerator

    func run(context: SourceContext) async throws {
        var decoders = (0..<count).map { _ in PedometerStreamDecoder(HGPTextDecoder()) }
        var states = [StepCounterState?](repeating: nil, count: count)
        var steps = [UInt32](repeating: 1000, count: count)
        let counter = StepCounter()
        let devices = (0..<count).map { index in
            Device(name: "StepPod 2 SN\(10_000 + index)", manufacturer: "Acme", model: "StepPod 2",
                   firmwareVersion: "1.4.2", localIdentifier: "SN\(10_000 + index)")
        }
        let tick = Duration.seconds(1) / count
        var next = ContinuousClock.now
        var device = 0
        while !Task.isCancelled {
            next += tick
            try await ContinuousClock().sleep(until: next)
            steps[device] &+= UInt32(1 + device % 3)
            // Metres with one decimal (0.75 m per step), without String(format:), which cost more
            // CPU than the framer and decoder it feeds.
            let decimetres = Int(steps[device]) * 15 / 2
            let bytes = Array(HGPTextDecoder.sentence("ST,\(steps[device]),\(decimetres / 10).\(decimetres % 10),110").utf8)
            let made = context.clock.now()
            var records: [HealthRecord] = []
            for outcome in decoders[device].feed(bytes) {
                guard case .success(.reading(let reading)) = outcome else { continue }
                let advance = counter.advance(
                    from: states[device], steps: reading.steps, distanceMeters: reading.distanceMeters, at: made)
                states[device] = advance.state
                guard let delta = advance.delta, delta.steps > 0 else { continue }
                records.append(.quantity(try QuantitySample(
                    id: ids.next(), type: .stepCount, quantity: Quantity(Double(delta.steps), .count),
                    start: delta.start, end: delta.end, device: devices[device])))
                if let meters = delta.distanceMeters, meters > 0 {
                    records.append(.quantity(try QuantitySample(
                        id: ids.next(), type: .distanceWalkingRunning, quantity: Quantity(meters, .meter),
                        start: delta.start, end: delta.end, device: devices[device])))
                }
            }
            await context.publisher.publish(records)
            device = (device + 1) % count
        }
        throw CancellationError()
    }
}

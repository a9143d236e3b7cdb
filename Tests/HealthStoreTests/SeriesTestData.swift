import Foundation
import GatewayTesting
import HealthModel
import HealthStore

/// Heart rates of several straps, as a class's bus delivers them: each strap about once a
/// second with its own jitter, now and then a pause long enough to close its series, a reading
/// that arrives late (after later ones of its strap: a sample of its own) or with a sync
/// identifier (a sample of its own too), in batches of mixed straps. Every reading has a start of
/// its own (no two share a microsecond), so the most recent value of any range is one reading.
struct ClassReadings {
    static let straps = (0..<12).map { index in
        Device(name: "Strap \(index)", manufacturer: index.isMultiple(of: 2) ? "Polar" : "Garmin",
               localIdentifier: String(format: "AA:BB:CC:00:00:%02X", index))
    }

    /// Every reading, in the order written.
    var written: [QuantitySample] = []
    /// The batches they were written in.
    var batches: [[QuantitySample]] = []

    /// `straps` straps over `seconds` seconds after `t0`, starting up to 100 s before it.
    init(
        seed: UInt64, straps: Int, seconds: Double, t0: Date, ids: SampleIDGenerator,
        withoutDevice: Bool = true
    ) throws {
        var random = SeededRandom(seed: seed)
        var readings: [QuantitySample] = []
        let devices: [Device?] = Array(Self.straps.prefix(straps)) + (withoutDevice ? [nil] : [])
        for (index, device) in devices.enumerated() {
            // Microseconds in units of the strap's index, so that no two straps share a start.
            var micros = Int64(Double.random(in: -100...0, using: &random) * 1_000_000) / 64 * 64 + Int64(index)
            let end = Int64(seconds * 1_000_000)
            while micros < end {
                var metadata = Metadata()
                if random.chance(0.01) {
                    metadata.syncIdentifier = "reading-\(index)-\(micros)"
                    metadata.syncVersion = 1
                }
                readings.append(try QuantitySample(
                    id: ids.next(), type: .heartRate, quantity: Quantity(Double(Int.random(in: 50...190, using: &random)), .countPerMinute),
                    start: t0.addingTimeInterval(Double(micros) / 1_000_000),
                    end: t0.addingTimeInterval(Double(micros) / 1_000_000), device: device, metadata: metadata))
                let step = random.chance(0.02) ? Double.random(in: 11...40, using: &random) : Double.random(in: 0.4...1.6, using: &random)
                micros += Int64(step * 1_000_000) / 64 * 64
            }
        }
        // The bus's order: by start, with a few readings held back past later ones.
        readings.sort { $0.startDate < $1.startDate }
        var order: [QuantitySample] = []
        var held: [QuantitySample] = []
        for reading in readings {
            if random.chance(0.01) {
                held.append(reading)
                continue
            }
            order.append(reading)
            if !held.isEmpty, random.chance(0.2) {
                order += held
                held = []
            }
        }
        order += held
        written = order
        var rest = order[...]
        while !rest.isEmpty {
            let size = Int.random(in: 1...200, using: &random)
            batches.append(Array(rest.prefix(size)))
            rest = rest.dropFirst(size)
        }
    }

    /// Writes every batch, one transaction each.
    func write(to store: HealthStore) async throws {
        for batch in batches { try await store.write(batch.map(HealthRecord.quantity)) }
    }
}

extension HealthStore {
    /// What a reader of the whole store sees of `type`: every plain sample of it and every
    /// quantity of its series, from the change log (not through the sample queries), by start
    /// then id.
    func everySample(of type: QuantityType) async throws -> [QuantitySample] {
        var samples: [QuantitySample] = []
        for record in try await changes(since: 0).added {
            switch record {
            case .quantity(let sample) where sample.type == type: samples.append(sample)
            case .quantitySeries(let series) where series.type == type: samples += series.quantitySamples
            default: break
            }
        }
        return samples.sorted { ($0.startDate, $0.id) < ($1.startDate, $1.id) }
    }
}

public import HealthModel
import FoundationEssentials
import Synchronization

/// Gives every published reading its person (``MetadataKey/person``) by the gateway's
/// ``PersonAttribution`` rules, before any sink sees it, so the store keeps the attribution with
/// the reading and every sink that follows the store sends it.
///
/// The rules are read for each batch (`rules`: the executable passes the people and the stored
/// run-time assignments, which change while it runs). A weighing decides first: a scale's other
/// readings of the same moment (body fat, BMI, height of one measurement) follow it, and each
/// attributed weighing becomes its person's reference weight. A record that names its person
/// already (an import) keeps it; workouts are not readings and pass as they are.
///
/// Isolation: the reference weights and counts live in a `Mutex`; `attribute` may be called
/// from any task.
public final class RecordAttributor: Sendable {
    private let rules: @Sendable () -> PersonAttribution
    private let state: Mutex<State>

    private struct State {
        var referenceWeights: [String: Double]
        var counts = Counts()
    }

    /// An attributor by `rules`.
    /// - Parameter referenceWeights: each person's weight to start from (kilograms): their
    ///   latest stored weighing, else their profile's weight.
    public init(rules: @escaping @Sendable () -> PersonAttribution, referenceWeights: [String: Double] = [:]) {
        self.rules = rules
        state = Mutex(State(referenceWeights: referenceWeights))
    }

    /// What the attributor did so far, as `status` and `/metrics` report it.
    public struct Counts: Hashable, Sendable, Codable {
        /// Readings given to a person.
        public var attributed = 0
        /// Readings given to nobody, by ``PersonAttribution/UnattributedReason`` (its raw value).
        public var unattributed: [String: Int] = [:]

        /// All the readings given to nobody.
        public var unattributedTotal: Int { unattributed.values.reduce(0, +) }

        /// No readings yet.
        public init() {}
    }

    /// The counts so far.
    public var counts: Counts { state.withLock { $0.counts } }

    /// The reference weights now, by person (kilograms).
    public var referenceWeights: [String: Double] { state.withLock { $0.referenceWeights } }

    /// `records`, each reading with its person where the rules give one. Order is kept.
    ///
    /// Cost (the ingest benchmark, issue 65): each record is read once for what the rules need
    /// (``Reading``) rather than copied whole; a run of readings from a device whose person does
    /// not depend on the reading (no wear interval names it, and the reading has no user index
    /// and is no weighing) is decided once; and each person's stamp is one metadata value per
    /// batch, which a reading without metadata takes as it is (no copy), so the store's writer
    /// meets the same set again and again.
    public func attribute(_ records: consuming [HealthRecord]) -> [HealthRecord] {
        let rules = rules()
        // Changed in place: each attributed record moves out of the array and back.
        var result = consume records
        var weighings: [WeighingKey: PersonAttribution.Outcome] = [:]
        var tally = Counts()
        var stamps: [String: Metadata] = [:]
        // The last device whose readings' person is its alone, with that outcome.
        var steady: (device: Device, outcome: PersonAttribution.Outcome)?
        // Weighings first, so that the other readings of their moment can follow them.
        let weighingIndices = result.indices.filter { result[$0].isWeighing }
        state.withLock { state in
            func visit(_ index: Int, weighing: Bool) {
                guard let reading = Reading(result[index]) else { return }
                let key = weighing || !weighings.isEmpty ? reading.device.map { WeighingKey(device: $0.pathIdentity, start: reading.start) } : nil
                // Named by its source (a Mi scale, which must know the person to compute body
                // fat): kept, and counted; a weighing so named is its person's reference too.
                if let person = reading.person {
                    tally.attributed += 1
                    if weighing, let key {
                        weighings[key] = .person(person)
                        if let weight = reading.weightKilograms { state.referenceWeights[person] = weight }
                    }
                    return
                }
                var outcome: PersonAttribution.Outcome
                if let steady, reading.userIndex == nil, reading.weightKilograms == nil, let device = reading.device,
                    steady.device == device
                {
                    outcome = steady.outcome
                } else {
                    outcome = rules.attribute(
                        device: reading.device, at: reading.start, userIndex: reading.userIndex,
                        weightKilograms: reading.weightKilograms, referenceWeights: state.referenceWeights)
                    if let device = reading.device, reading.userIndex == nil, reading.weightKilograms == nil,
                        !rules.dependsOnTime(device)
                    {
                        steady = (device, outcome)
                    }
                }
                if weighing, let key {
                    weighings[key] = outcome
                    if case .person(let name) = outcome, let weight = reading.weightKilograms { state.referenceWeights[name] = weight }
                } else if case .unattributed(.sharedDevice) = outcome, let key, let weighing = weighings[key] {
                    outcome = weighing
                }
                switch outcome {
                case .person(let name):
                    tally.attributed += 1
                    if let stamp = stamps[name] {
                        result[index].stamp(stamp)
                    } else {
                        let stamp: Metadata = [.person: .string(name)]
                        stamps[name] = stamp
                        result[index].stamp(stamp)
                    }
                case .unattributed(let reason):
                    tally.unattributed[reason.rawValue, default: 0] += 1
                }
            }
            for index in weighingIndices { visit(index, weighing: true) }
            var next = weighingIndices.makeIterator()
            var skip = next.next()
            for index in result.indices {
                if index == skip {
                    skip = next.next()
                    continue
                }
                visit(index, weighing: false)
            }
            state.counts.attributed += tally.attributed
            state.counts.unattributed.merge(tally.unattributed, uniquingKeysWith: +)
        }
        return result
    }

    /// A scale's measurement: its device's path and its time.
    private struct WeighingKey: Hashable {
        var device: DeviceIdentity?
        var start: Date
    }

    /// What the rules read of a record.
    private struct Reading {
        var device: Device?
        var start: Date
        var userIndex: Int64?
        var weightKilograms: Double?
        var person: String?

        /// Nil for a workout, which is not a reading.
        init?(_ record: HealthRecord) {
            let metadata: Metadata
            switch record {
            case .quantity(let sample):
                (device, start, metadata) = (sample.device, sample.startDate, sample.metadata)
                if sample.type == .bodyMass { weightKilograms = sample.canonicalValue }
            case .quantitySeries(let series): (device, start, metadata) = (series.device, series.startDate, series.metadata)
            case .heartbeatSeries(let series): (device, start, metadata) = (series.device, series.startDate, series.metadata)
            case .correlation(let correlation):
                (device, start, metadata) = (correlation.device, correlation.startDate, correlation.metadata)
            case .workout: return nil
            }
            if case .integer(let index)? = metadata[.userIndex] { userIndex = index }
            if case .string(let name)? = metadata[.person] { person = name }
        }
    }
}

extension HealthRecord {
    /// Whether the record is a weighing (a body-mass sample), which attribution decides first.
    fileprivate var isWeighing: Bool {
        if case .quantity(let sample) = self { sample.type == .bodyMass } else { false }
    }
}

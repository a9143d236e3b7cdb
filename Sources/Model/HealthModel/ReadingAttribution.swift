public import FoundationEssentials

/// Whose each reading of a batch is, and whether it may be stored at all: the one
/// implementation of attribution (issue 77). The store's writer runs it in the transaction that
/// stores the batch, on the rules and erasures committed before it; a live view (a workout's
/// figures on the board) runs a copy of the writer's latest on what it shows before the commit.
/// A value with no I/O and no clock.
///
/// For each reading, by its own start:
/// - one that names its person already (an import) keeps it;
/// - a weighing (body mass) is decided first by ``rules``; the other readings of the same scale
///   and moment (body fat, lean mass, BMI, water: a body composition scale publishes them after
///   the weight, in this batch or a later one) that the rules leave to nobody as a shared
///   device's take the weighing's person, and an attributed weighing becomes its person's
///   reference weight;
/// - any other is the rules' (``PersonAttribution``);
/// - a reading that is an erased person's and dated before their erase is dropped, as is a
///   workout of an erased participant that started before the erase.
public struct ReadingAttribution: Sendable {
    /// The rules: the configured people and the wear intervals (the erased ones included: they
    /// still tell whose a reading was).
    public var rules: PersonAttribution
    /// Each erased person's latest erase.
    public var erasedAt: [String: Date]
    /// Each person's reference weight (kilograms).
    public var referenceWeights: [String: Double]
    /// Each scale's latest weighing: its time and whose it was.
    var weighings: [DeviceIdentity: (start: Date, outcome: PersonAttribution.Outcome)] = [:]

    /// Attribution by `rules`, with `erasedAt` and the reference weights to start from.
    public init(rules: PersonAttribution, erasedAt: [String: Date] = [:], referenceWeights: [String: Double] = [:]) {
        self.rules = rules
        self.erasedAt = erasedAt
        self.referenceWeights = referenceWeights
    }

    /// The same attribution with other rules and erasures, keeping what it learnt (the
    /// reference weights and the latest weighings).
    public mutating func update(rules: PersonAttribution, erasedAt: [String: Date]) {
        self.rules = rules
        self.erasedAt = erasedAt
    }

    /// Whether `person` was erased after `date`: a reading of theirs dated then is not stored.
    public func isErased(_ person: String, at date: Date) -> Bool {
        erasedAt[person].map { date < $0 } ?? false
    }

    /// Whose a weighing of `kilograms` on `scale` at `date` is, as ``attribute(_:counts:)`` decides
    /// it for a body-mass sample (an erased person's weighing is nobody's here); an attributed
    /// weighing becomes its person's reference weight. What a source that must know the person
    /// to compute a figure (a Mi scale's body composition) asks.
    public mutating func weighing(on scale: Device, at date: Date, kilograms: Double) -> PersonAttribution.Outcome {
        let outcome = rules.attribute(device: scale, at: date, weightKilograms: kilograms, referenceWeights: referenceWeights)
        if let identity = scale.pathIdentity { weighings[identity] = (date, outcome) }
        guard case .person(let name) = outcome else { return outcome }
        if isErased(name, at: date) { return .unattributed(.nobody) }
        referenceWeights[name] = kilograms
        return outcome
    }

    /// `records`, each reading with its person (``MetadataKey/person``) where one is found,
    /// without those an erasure keeps out; order is kept. `counts` adds what was decided.
    ///
    /// Cost (the ingest benchmark): a run of readings of a device whose person does not depend
    /// on the reading (no interval names it, no user index, no weighing) is decided once, and
    /// each person's stamp is one metadata value per batch, which a reading without metadata
    /// takes as it is, so the store's writer meets the same set again and again.
    public mutating func attribute(_ records: consuming [HealthRecord], counts: inout AttributionCounts) -> [HealthRecord] {
        var result = consume records
        if rules.isEmpty && erasedAt.isEmpty {
            for record in result {
                guard let reading = Reading(record) else { continue }
                let reason: PersonAttribution.UnattributedReason = reading.device == nil ? .noDevice : .nobody
                if reading.person != nil { counts.attributed += 1 } else { counts.unattributed[reason.rawValue, default: 0] += 1 }
            }
            return result
        }
        var pass = Pass()
        // Weighings first, so that the other readings of their moment can follow them.
        let weighingIndices = result.indices.filter { result[$0].isWeighing }
        for index in weighingIndices { visit(&result, index, weighing: true, &pass, &counts) }
        var next = weighingIndices.makeIterator()
        var skip = next.next()
        for index in result.indices {
            if index == skip {
                skip = next.next()
                continue
            }
            visit(&result, index, weighing: false, &pass, &counts)
        }
        guard !pass.dropped.isEmpty else { return result }
        return result.indices.filter { !pass.dropped.contains($0) }.map { result[$0] }
    }

    /// What one call of ``attribute(_:counts:)`` keeps between its records.
    private struct Pass {
        var stamps: [String: Metadata] = [:]
        /// The last device whose readings' person is its alone, with that outcome.
        var steady: (device: Device, outcome: PersonAttribution.Outcome)?
        var dropped: Set<Int> = []
    }

    private mutating func visit(
        _ records: inout [HealthRecord], _ index: Int, weighing: Bool, _ pass: inout Pass, _ counts: inout AttributionCounts
    ) {
        guard let reading = Reading(records[index]) else {
            if case .workout(let workout) = records[index], let participant = records[index].person,
                isErased(participant, at: workout.startDate)
            {
                pass.dropped.insert(index)
                counts.erased += 1
            }
            return
        }
        var outcome: PersonAttribution.Outcome
        if let person = reading.person {
            outcome = .person(person)
        } else if let steady = pass.steady, !weighing, reading.userIndex == nil, let device = reading.device, steady.device == device {
            outcome = steady.outcome
        } else {
            outcome = rules.attribute(
                device: reading.device, at: reading.start, userIndex: reading.userIndex,
                weightKilograms: reading.weightKilograms, referenceWeights: referenceWeights)
            if let device = reading.device, !weighing, reading.userIndex == nil, !rules.dependsOnTime(device) {
                pass.steady = (device, outcome)
            }
        }
        let identity = reading.device?.pathIdentity
        if weighing, let identity {
            weighings[identity] = (reading.start, outcome)
        } else if case .unattributed(.sharedDevice) = outcome, let identity, let moment = weighings[identity],
            moment.start == reading.start
        {
            outcome = moment.outcome
        }
        switch outcome {
        case .person(let name):
            if isErased(name, at: reading.start) {
                pass.dropped.insert(index)
                counts.erased += 1
                return
            }
            counts.attributed += 1
            if weighing, let weight = reading.weightKilograms { referenceWeights[name] = weight }
            guard reading.person == nil else { return }
            if let stamp = pass.stamps[name] {
                records[index].stamp(stamp)
            } else {
                let stamp: Metadata = [.person: .string(name)]
                pass.stamps[name] = stamp
                records[index].stamp(stamp)
            }
        case .unattributed(let reason):
            counts.unattributed[reason.rawValue, default: 0] += 1
        }
    }

    /// What attribution reads of a record.
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
    /// Whether the record is a weighing (a body-mass sample), which attribution decides first
    /// and the other readings of its scale and instant follow.
    public var isWeighing: Bool {
        if case .quantity(let sample) = self { sample.type == .bodyMass } else { false }
    }
}

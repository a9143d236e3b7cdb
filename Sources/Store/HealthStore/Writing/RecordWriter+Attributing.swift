import FoundationEssentials
import HealthModel
import SQLite

// Attribution where the reading is committed (issue 77): in the transaction that stores it, by
// its own start, against the wear intervals, erasures and people committed before it
// (HealthModel's ReadingAttribution, the one implementation).
extension RecordWriter {
    /// The people the configuration lists; from the next transaction on, readings are attributed
    /// by them too. Their reference weights replace those the writer holds.
    func setAttributionRoster(_ roster: AttributionRoster) {
        incoming.roster = roster
        incoming.isCurrent = false
        for person in roster.people {
            if let weight = person.referenceWeightKilograms { incoming.attribution.referenceWeights[person.name] = weight }
        }
    }

    /// Makes the next transaction read the rules again: this writer changed the intervals or the
    /// erasures (which `PRAGMA data_version` does not tell its own connection).
    func forgetAttributionRules() {
        incoming.isCurrent = false
    }

    /// Reads the rules committed now and publishes them (``CommittedAttribution``), after this
    /// writer changed them: the live view previews the readings of a strap just handed over
    /// by the new rules before the next write.
    func publishAttributionRules() throws(StoreError) {
        forgetAttributionRules()
        do {
            _ = try readAttributionRules()
        } catch {
            throw StoreError.wrap(error, path: path)
        }
        committedAttribution.add(AttributionCounts(), attribution: incoming.attribution)
    }

    /// ``publishAttributionRules()`` after a commit that changed the rules (an assignment, an
    /// erasure). A failure to read them back is not the commit's, which holds: the rules stay
    /// forgotten, and the next write reads them in its transaction and throws there if it must.
    func publishAttributionRulesAfterCommit() {
        do {
            try publishAttributionRules()
        } catch {
            forgetAttributionRules()
        }
    }

    /// `records` attributed (``HealthModel/ReadingAttribution``) by the rules committed now;
    /// only inside ``transaction(_:)``.
    /// - Returns: the records to store, and whether the attribution changed (new rules, a
    ///   weighing): then the caller publishes it once the transaction commits.
    func attributeIncoming(_ records: consuming [HealthRecord], counts: inout AttributionCounts) throws -> (
        records: [HealthRecord], changed: Bool
    ) {
        var changed = try readAttributionRules()
        if records.contains(where: \.isWeighing) { changed = true }
        return (incoming.attribution.attribute(records, counts: &counts), changed)
    }

    /// Reads the rules again when another connection committed since they were read, or this
    /// writer forgot them. Returns whether it read them.
    private func readAttributionRules() throws -> Bool {
        let version = try connection.query("PRAGMA data_version").first?.integer(0)
        if incoming.isCurrent, version == incoming.dataVersion { return false }
        var history = try connection.query("SELECT device, participant, start_us, end_us FROM wear_intervals").compactMap { row in
            row.text(0).flatMap { device in
                row.text(1).flatMap { person in
                    row.integer(2).map { start in
                        WearInterval(
                            device: device, person: person, start: StoreTime.date(microseconds: start),
                            end: row.integer(3).map { StoreTime.date(microseconds: $0) })
                    }
                }
            }
        }
        var erasedAt: [String: Date] = [:]
        for row in try connection.query("SELECT person, erased_us, device, start_us, end_us FROM erasures") {
            guard let person = row.text(0), let erasedMicros = row.integer(1) else { continue }
            let erased = StoreTime.date(microseconds: erasedMicros)
            if erasedAt[person].map({ erased > $0 }) ?? true { erasedAt[person] = erased }
            // An erased interval still tells whose its readings were: theirs, and so not stored.
            if let device = row.text(2), let start = row.integer(3) {
                history.append(WearInterval(
                    device: device, person: person, start: StoreTime.date(microseconds: start),
                    end: StoreTime.date(microseconds: row.integer(4) ?? erasedMicros)))
            }
        }
        incoming.attribution.update(rules: PersonAttribution(roster: incoming.roster, history: history), erasedAt: erasedAt)
        incoming.isCurrent = true
        incoming.dataVersion = version
        return true
    }

    /// Records `person`'s erase at `date` with their wear intervals (the one that holds ending
    /// at `date`), then deletes the intervals; only inside ``transaction(_:)``.
    func recordErasure(of person: String, at date: Date) throws {
        let bindings: [SQLiteValue] = [.text(person), .integer(StoreTime.microseconds(date))]
        try connection.run(
            """
            INSERT INTO erasures (person, erased_us, device, start_us, end_us)
            SELECT participant, ?2, device, start_us, ifnull(end_us, max(start_us, ?2)) FROM wear_intervals WHERE participant = ?1
            """, bindings)
        try connection.run("INSERT INTO erasures (person, erased_us) VALUES (?1, ?2)", bindings)
        try connection.run("DELETE FROM wear_intervals WHERE participant = ?1", [.text(person)])
        forgetAttributionRules()
    }
}

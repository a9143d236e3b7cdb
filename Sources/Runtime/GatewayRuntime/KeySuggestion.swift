/// The known key a misspelt one most likely meant, by edit distance.
public enum KeySuggestion {
    /// The known key closest to `name` (ignoring case), or nil when none is close: at most a
    /// third of the longer name's characters may differ, and at least two may.
    public static func closest(to name: String, among known: [String]) -> String? {
        let lowered = Array(name.lowercased())
        var best: (key: String, distance: Int)?
        for candidate in known {
            let other = Array(candidate.lowercased())
            let distance = editDistance(lowered, other)
            let allowed = max(2, max(lowered.count, other.count) / 3)
            guard distance <= allowed else { continue }
            if let current = best, current.distance <= distance { continue }
            best = (candidate, distance)
        }
        return best?.key
    }

    /// Levenshtein distance: insertions, deletions and substitutions each cost 1.
    public static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

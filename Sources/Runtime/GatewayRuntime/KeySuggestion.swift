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

    /// The key a person most likely meant by `name`: the same name in another case, else a
    /// key that begins with it or that it begins with (three characters at least; the nearest
    /// in length), else the closest by edit distance (``closest(to:among:)``). `known` should
    /// hold only keys that could take the value given (see
    /// ``ConfigurationSchema/problems(in:)``): a suggestion that then refuses the value helps
    /// nobody.
    public static func suggestion(for name: String, among known: [String]) -> String? {
        let lowered = name.lowercased()
        if let same = known.first(where: { $0.lowercased() == lowered }) { return same }
        let prefixed = known.filter { candidate in
            let other = candidate.lowercased()
            return min(other.count, lowered.count) >= 3 && (other.hasPrefix(lowered) || lowered.hasPrefix(other))
        }
        if let nearest = prefixed.min(by: { (abs($0.count - name.count), $0) < (abs($1.count - name.count), $1) }) {
            return nearest
        }
        return closest(to: name, among: known)
    }

    /// Edit distance with adjacent transpositions (optimal string alignment): insertions,
    /// deletions, substitutions and swapping two neighbours each cost 1, so `josn` is one edit
    /// from `json`, as a slip of the fingers is.
    public static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}

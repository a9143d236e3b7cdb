public import HealthModel

/// A chest strap's beats as it sends them: RR intervals in 1/1024 s (the unit of Bluetooth's and
/// ANT+'s heart-rate measurements), varying from beat to beat as a heart's rhythm does, so that a
/// store keeps them as it keeps a real strap's.
public enum StrapBeats {
    /// `count` beats from a series' start, those of strap number `strap`: each interval 820 to
    /// 869 ticks (0.80 to 0.85 s), none preceded by a gap; 70 beats span 57.7 s at most.
    public static func series(strap: Int, count: Int) -> [Heartbeat] {
        var ticks = 0
        return (0..<count).map { beat in
            ticks += 820 + (beat * 37 + strap * 11) % 50
            return Heartbeat(timeSinceSeriesStart: Double(ticks) / 1024, precededByGap: false)
        }
    }
}

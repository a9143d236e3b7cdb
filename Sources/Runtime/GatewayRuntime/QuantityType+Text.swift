public import HealthModel

extension QuantityType {
    /// `value`, in the type's canonical unit, as people read it: rounded to the type's
    /// ``QuantityType/fractionDigits`` (`72` for a heart rate, `36.8` for a temperature, `16`
    /// steps). Every text output of a value goes through it, so a type prints the same way
    /// everywhere; JSON and CSV keep the exact value.
    public func text(for value: Double) -> String {
        String(value, fractionDigits: fractionDigits)
    }
}

extension String {
    /// `value` with exactly `fractionDigits` decimals (0…17), a half rounded away from zero as
    /// people round (`82.5` → `83`; printf alone rounds an exact half to even), and never `-0`:
    /// a negative value that rounds to zero prints as zero.
    public init(_ value: Double, fractionDigits: Int) {
        let digits = Swift.min(Swift.max(fractionDigits, 0), 17)
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = value * scale
        // Rounded here, where the half is exact; printf then only writes the digits.
        let rounded = scaled.isFinite && abs(scaled) < 1e17 ? scaled.rounded(.toNearestOrAwayFromZero) / scale : value
        let text = String(cFormat: "%.*f", Int32(digits), rounded)
        // "-0", "-0.0": the sign of a value too small to show says nothing.
        self = text.hasPrefix("-") && text.dropFirst().allSatisfy { $0 == "0" || $0 == "." } ? String(text.dropFirst()) : text
    }
}

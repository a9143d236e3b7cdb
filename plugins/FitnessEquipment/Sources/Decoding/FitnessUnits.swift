/// Conversions from the FTMS resolutions to SI.
enum FitnessUnits {
    /// 0.01 km/h → m/s.
    static func speed(_ raw: Int) -> Double { Double(raw) / 360 }
    /// 0.1 of a unit.
    static func tenths(_ raw: Int) -> Double { Double(raw) / 10 }
    /// 0.5 of a unit.
    static func halves(_ raw: Int) -> Double { Double(raw) / 2 }
}

public import HealthgateAdapter

extension Weighing {
    /// The weighing as a `bodyMass` reading of the scale `serial`, in the line's own unit (the
    /// gateway converts `lb`). Its id, `<serial>/<date as written>`, depends only on what the
    /// line says, so the same line read again is stored once.
    public func quantity(serial: String) -> QuantityMessage {
        QuantityMessage(
            .bodyMass, value: value, unit: unit.healthUnit, start: date, id: "\(serial)/\(date)", device: serial,
            metadata: ["weighing": .string(kind.name)])
    }
}

extension Weighing.Unit {
    /// The gateway's unit.
    var healthUnit: HealthUnit {
        switch self {
        case .kilogram: .kilogram
        case .pound: .pound
        }
    }
}

extension Weighing.Kind {
    /// The kind in words, as the reading's `weighing` metadata.
    public var name: String {
        switch self {
        case .gross: "gross"
        case .net: "net"
        }
    }
}

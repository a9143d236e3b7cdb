/// Why a line of the scale is no weighing.
///
/// A struct with a nested code, so that a new reason is no breaking change.
public struct WeighingLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the line.
    public enum Code: Sendable, Hashable {
        /// Nothing but white space: scales send blank lines between prints.
        case blank
        /// The `OL` header: the load is over the scale's capacity, no weight was measured.
        case overload
        /// A byte that is no printable ASCII character (noise on the line, a wrong baud rate).
        case notText
        /// The line is not `<date> <header>,<kind>,<weight>`.
        case notThreeFields
        /// The date is no RFC 3339 date with a zone.
        case badDate
        /// The header is none of `ST`, `US`, `OL`.
        case unknownHeader
        /// The kind is none of `GS`, `NT`.
        case unknownKind
        /// The weight is no sign followed by a decimal number.
        case badWeight
        /// The unit is none of `kg`, `lb`.
        case unknownUnit
    }

    /// What is wrong.
    public var code: Code
    /// The line, printable (control characters and other bytes escaped), without its newline.
    public var line: String

    /// The error `code` about `line` (printable already).
    public init(_ code: Code, line: String) {
        self.code = code
        self.line = line
    }

    /// What is wrong, in words.
    public var reason: String {
        switch code {
        case .blank: "a blank line"
        case .overload: "overload: the load is over the scale's capacity"
        case .notText: "not printable ASCII text (noise, or the port's speed is wrong)"
        case .notThreeFields: "not \"<date> <header>,<kind>,<weight><unit>\""
        case .badDate: "the date is no RFC 3339 date with a zone"
        case .unknownHeader: "the header is none of ST, US, OL"
        case .unknownKind: "the kind is none of GS, NT"
        case .badWeight: "the weight is no sign and decimal number"
        case .unknownUnit: "the unit is none of kg, lb"
        }
    }

    /// The reason, then the line quoted.
    public var description: String { "\(reason): \"\(line)\"" }
}

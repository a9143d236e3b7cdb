import Foundation
import HealthModel

/// Keeps HealthModel's RFC 3339 parser behind one name inside this module.
enum RFC3339Bridge {
    static func date(_ text: String) -> Date? { RFC3339.date(from: text) }
    static func string(_ date: Date) -> String { RFC3339.string(from: date) }
}

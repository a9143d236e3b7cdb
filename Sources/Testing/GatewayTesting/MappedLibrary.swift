import Foundation
import XCTest

/// The file the dynamic loader mapped for a library whose path contains `name` (the file a soname
/// links to, e.g. libz.so.1.3), from /proc/self/maps; nil when none is mapped.
/// - Throws: when /proc/self/maps cannot be read.
public func mappedLibraryPath(containing name: String) throws -> String? {
    // FileHandle: a /proc file reports size 0, and String(contentsOfFile:) would stop early.
    let file = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/maps"))
    defer { try? file.close() }
    let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    return maps.split(separator: "\n").lazy
        .compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init) }
        .first { $0.hasPrefix("/") && $0.contains(name) }
}

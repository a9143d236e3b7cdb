public import Foundation
public import XCTest

/// A test case with a temporary directory of its own, made before each test and removed after
/// it, and the path of a store file in it.
open class TemporaryDirectoryTestCase: XCTestCase {
    /// What the directory's name starts with (``TestEnvironment/temporaryDirectory(_:)``): each
    /// test class names its own, so a directory left behind says whose it was.
    open class var directoryPrefix: String { "healthgate-test" }

    /// The temporary directory, made in `setUp`.
    public var directory: URL!
    /// The store's file in ``directory``.
    public var path: String { directory.appendingPathComponent("samples.sqlite").path }

    open override func setUp() async throws {
        try await super.setUp()
        directory = try TestEnvironment.temporaryDirectory(Self.directoryPrefix)
    }

    open override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}

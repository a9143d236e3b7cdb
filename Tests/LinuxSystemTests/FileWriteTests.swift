import Foundation
import GatewayTesting
import LinuxSystem
import XCTest

/// `FileSystem.writeFile`, on what a command's `--output` may name, each made in a temporary
/// directory of the test's own: a regular file is replaced whole by a rename, a missing one is
/// created, a symbolic link is followed and kept, a named pipe is written into and stays a
/// pipe, and a directory is refused. (A character device is checked end to end, with the
/// built executable: `OutputToDevicesTests`.)
final class FileWriteTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "file-write" }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The names in the test's directory: no temporary file is ever left behind.
    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() }

    func mode(_ path: String) throws -> Int {
        try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    func inode(_ path: String) throws -> UInt64 {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, path)
        return UInt64(info.st_ino)
    }

    func testARegularFileIsReplacedWholeWithTheModeGiven() throws {
        let file = path("ride.fit")
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data("old content, longer than the new".utf8),
                                                    attributes: [.posixPermissions: 0o644]))
        let before = try inode(file)
        let method = try FileSystem.writeFile(Array("new".utf8), to: file, mode: 0o600)
        XCTAssertEqual(method, .replacedAtomically)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "new")
        XCTAssertEqual(try mode(file), 0o600, "the mode given, not the replaced file's")
        XCTAssertNotEqual(try inode(file), before, "a new file renamed over the old one, not the old one rewritten")
        XCTAssertEqual(try names(), ["ride.fit"])
    }

    func testAMissingFileIsCreatedWithTheModeGivenWhateverTheUmask() throws {
        let file = path("config.json")
        let previous = umask(0o077)
        defer { umask(previous) }
        XCTAssertEqual(try FileSystem.writeFile(Array("{}".utf8), to: file, mode: 0o644), .replacedAtomically)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "{}")
        XCTAssertEqual(try mode(file), 0o644)
        XCTAssertEqual(try names(), ["config.json"])
    }

    func testAPathInAMissingDirectoryIsAnErrorNamingPathAndStep() throws {
        let file = path("none/out.svg")
        XCTAssertThrowsError(try FileSystem.writeFile([1], to: file, mode: 0o600)) { error in
            let failure = error as? FileWriteError
            XCTAssertEqual(failure?.path, file)
            XCTAssertEqual(failure?.code, .failed(step: "create a temporary file in \(self.path("none"))", errno: .noSuchFile))
            XCTAssertEqual(
                failure?.description, "\(file): cannot create a temporary file in \(self.path("none")): No such file or directory")
        }
        XCTAssertEqual(try names(), [])
    }

    /// A link to a file (absolute, relative, or a chain) stays a link, and its target gets the
    /// bytes; a dangling link creates its target.
    func testASymbolicLinkIsFollowedToItsTargetAndKept() throws {
        let target = path("target.svg")
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data("old".utf8)))
        try FileManager.default.createSymbolicLink(atPath: path("absolute"), withDestinationPath: target)
        try FileManager.default.createSymbolicLink(atPath: path("relative"), withDestinationPath: "target.svg")
        try FileManager.default.createSymbolicLink(atPath: path("chain"), withDestinationPath: "relative")
        for (link, content) in [("absolute", "one"), ("relative", "two"), ("chain", "three")] {
            XCTAssertEqual(try FileSystem.writeFile(Array(content.utf8), to: path(link), mode: 0o600), .replacedAtomically, link)
            XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), content, link)
            XCTAssertNotNil(try? FileManager.default.destinationOfSymbolicLink(atPath: path(link)), "\(link) is still a link")
        }
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path("relative")), "target.svg")

        try FileManager.default.createSymbolicLink(atPath: path("dangling"), withDestinationPath: "made.svg")
        try FileSystem.writeFile(Array("made".utf8), to: path("dangling"), mode: 0o600)
        XCTAssertEqual(try String(contentsOfFile: path("made.svg"), encoding: .utf8), "made")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path("dangling")), "made.svg")
        XCTAssertEqual(try names(), ["absolute", "chain", "dangling", "made.svg", "relative", "target.svg"])
    }

    /// A named pipe (what `/dev/stdout` is under a shell's pipe) is written into, in place:
    /// the reader gets the bytes and the node is still a pipe.
    func testANamedPipeIsWrittenInPlaceAndStaysAPipe() throws {
        let pipe = path("pipe")
        XCTAssertEqual(mkfifo(pipe, 0o600), 0, String(cString: strerror(errno)))
        // The reader first (non-blocking), so that opening the pipe for writing does not wait.
        let reader = open(pipe, O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        let bytes = Array("<svg/>".utf8)
        XCTAssertEqual(try FileSystem.writeFile(bytes, to: pipe, mode: 0o600), .inPlace)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(reader, &buffer, buffer.count)
        XCTAssertEqual(Array(buffer.prefix(max(count, 0))), bytes)
        var info = stat()
        XCTAssertEqual(lstat(pipe, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO, "still a named pipe")
        XCTAssertEqual(try names(), ["pipe"])
    }

    func testADirectoryIsRefusedWithItsPath() throws {
        let folder = path("exports")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: path("link"), withDestinationPath: "exports")
        for given in [folder, path("link")] {
            XCTAssertThrowsError(try FileSystem.writeFile([1], to: given, mode: 0o600)) { error in
                XCTAssertEqual(error as? FileWriteError, FileWriteError(path: given, .isDirectory))
                XCTAssertEqual("\(error)", "\(given): is a directory; give the path of a file to write")
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), [], "nothing written inside")
        XCTAssertEqual(try names(), ["exports", "link"])
    }
}

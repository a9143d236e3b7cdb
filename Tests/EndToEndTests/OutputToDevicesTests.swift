import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import XCTest

/// `--output` of the commands that write a file (`workout export`, `workout chart`,
/// `config init`), run as a user runs them, into what is not a regular file: a character device
/// stays the same device, with its mode, and nothing is left beside it; a link to the process's
/// own standard output (a pipe here) gets the bytes, with nothing else printed there.
///
/// Why this cannot harm the machine: every node is made in the test's own temporary directory.
/// The character device is a node of its own, made with mknod(2) as a copy of the null device
/// (major 1, minor 3), so what is written into it is discarded; were a command to rename a file
/// over it or remove it, only that node in the temporary directory would go, never /dev/null.
/// The link to standard output is a link in that directory to /proc/self/fd/1, never
/// /dev/stdout itself, so a command that replaced the link would replace only the test's link.
final class OutputToDevicesTests: XCTestCase {
    /// `makedev(1, 3)`: glibc's encoding of a device number, for small majors and minors
    /// (`gnu_dev_makedev` in sys/sysmacros.h).
    static let nullDevice = dev_t((1 << 8) | 3)

    /// A workout of a minute with a heart rate each second, in a new store.
    func storeAWorkout(in executable: HealthgateExecutable) async throws -> (database: String, id: SampleID) {
        let database = executable.root.appendingPathComponent("store.sqlite").path
        let ids = SampleIDGenerator(seed: 31)
        let start = Date(timeIntervalSince1970: 1_795_676_400)
        let strap = Device(name: "Strap", localIdentifier: "C0:FF:EE:00:00:02")
        let samples = try (1...60).map { second in
            try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(120 + Double(second % 7), .countPerMinute),
                start: start.addingTimeInterval(Double(second)), end: start.addingTimeInterval(Double(second)), device: strap)
        }
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: start, endDate: start.addingTimeInterval(60), duration: 60,
            statistics: [QuantityStatistics(
                type: .heartRate, startDate: start, endDate: start.addingTimeInterval(60), sampleCount: samples.count, average: 123)])
        try await HealthStore(path: database).write(samples.map(HealthRecord.quantity) + [.workout(workout)])
        return (database, workout.id)
    }

    func testACharacterDeviceGivenAsOutputStaysThatDevice() async throws {
        let executable = try HealthgateExecutable()
        let node = executable.root.appendingPathComponent("null").path
        guard mknod(node, S_IFCHR | 0o666, Self.nullDevice) == 0 else {
            throw XCTSkip("cannot make a device node (mknod(2): \(String(cString: strerror(errno)))); it needs CAP_MKNOD")
        }
        chmod(node, 0o666)
        let probe = open(node, O_WRONLY)
        guard probe >= 0 else {
            throw XCTSkip("the temporary directory's file system refuses device nodes (nodev): \(String(cString: strerror(errno)))")
        }
        close(probe)
        let (database, id) = try await storeAWorkout(in: executable)
        let runs: [[String]] = [
            ["workout", "export", "\(id)", "--format", "fit", "--db", database],
            ["workout", "export", "\(id)", "--format", "tcx", "--db", database],
            ["workout", "chart", "\(id)", "--db", database],
            ["config", "init", "--force"],
        ]
        for arguments in runs {
            let result = try await executable.run(arguments + ["--output", node])
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardError)")
            XCTAssertEqual(result.standardOutput, "", "\(arguments): nothing but the bytes goes to a device")
            var info = stat()
            XCTAssertEqual(lstat(node, &info), 0, "\(arguments): the node is still there")
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFCHR, "\(arguments): still a character device")
            XCTAssertEqual(info.st_rdev, Self.nullDevice, "\(arguments): the same device")
            XCTAssertEqual(info.st_mode & 0o777, 0o666, "\(arguments): its mode untouched")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: executable.root.path).filter { $0.hasPrefix(".null") }
        XCTAssertEqual(left, [], "no temporary file left beside the device")
    }

    /// `--output` through a link to the process's standard output, a pipe to the test: the
    /// bytes arrive on the pipe, and no "wrote …" line follows them.
    func testALinkToStandardOutputGetsTheBytesAlone() async throws {
        let executable = try HealthgateExecutable()
        let link = executable.root.appendingPathComponent("stdout").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/proc/self/fd/1")
        let (database, id) = try await storeAWorkout(in: executable)
        let export = try await executable.run(["workout", "export", "\(id)", "--format", "tcx", "--db", database, "--output", link])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(export.standardOutput.hasPrefix("<?xml"), export.standardOutput)
        XCTAssertTrue(
            export.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("</TrainingCenterDatabase>"),
            "the activity alone: \(export.standardOutput.suffix(200))")
        XCTAssertFalse(export.standardOutput.contains("wrote "), String(export.standardOutput.suffix(200)))
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), "/proc/self/fd/1", "the link is kept")

        let chart = try await executable.run(["workout", "chart", "\(id)", "--db", database, "--output", link])
        XCTAssertEqual(chart.status, 0, chart.standardError)
        XCTAssertTrue(chart.standardOutput.contains("<svg"), chart.standardOutput)
        XCTAssertTrue(
            chart.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("</svg>"),
            "the chart alone: \(chart.standardOutput.suffix(100))")

        // A directory is refused with its path (73), and a file gets "wrote …" as before.
        let directory = try await executable.run(["workout", "chart", "\(id)", "--db", database, "--output", executable.root.path])
        XCTAssertEqual(directory.status, 73, directory.standardError)
        XCTAssertTrue(
            directory.standardError.contains("cannot write \(executable.root.path): is a directory; give the path of a file to write"),
            directory.standardError)
        let file = executable.root.appendingPathComponent("run.svg").path
        let written = try await executable.run(["workout", "chart", "\(id)", "--db", database, "--output", file])
        XCTAssertEqual(written.standardOutput, "wrote \(file)\n", written.standardError)
    }
}

import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import WebBoard
import WorkoutPresentation
import WorkoutRuntime
import Workouts
import XCTest

/// libmicrohttpd is loaded when the board starts, not linked: a missing library stops the start
/// with a message that names it and the package to install; the real one serves the page.
final class BoardServerLibraryTests: XCTestCase {
    func server(library: MicroHTTPDLibrary) -> BoardServer {
        let clock = ManualClock()
        let logger = Logger(label: "web", sink: RecordingLogSink(), level: .debug)
        let workouts = ParticipantWorkouts(
            roster: ParticipantRoster(participants: [], defaultProfile: UserProfile()), store: VolatileWorkoutStore(),
            clock: clock, ids: SampleIDGenerator(), logger: logger)
        return BoardServer(
            configuration: WebBoardConfiguration(listen: try! ListenAddress(parsing: "127.0.0.1:0")), token: nil,
            board: LiveBoard(workouts: workouts, clock: clock), history: nil, logger: logger,
            library: library)
    }

    func testAMissingLibraryStopsTheStartAndNamesThePackage() async {
        let board = server(library: MicroHTTPDLibrary(path: "libmicrohttpd-not-installed.so.12"))
        XCTAssertThrowsError(try board.start()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("cannot load libmicrohttpd-not-installed.so.12"), text)
            XCTAssertTrue(text.contains("apt install libmicrohttpd12"), text)
        }
        await board.stop()
    }

    func testTheRealLibraryServesThePage() async throws {
        let board = server(library: MicroHTTPDLibrary())
        let port = try board.start()
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code} %{content_type}", "http://127.0.0.1:\(port)/"]
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        curl.waitUntilExit()
        let answer = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(answer.hasPrefix("200 text/html"), answer)
        await board.stop()
    }
}

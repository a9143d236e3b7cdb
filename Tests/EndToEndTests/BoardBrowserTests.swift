import Foundation
import GatewayTesting
import XCTest

/// The live board end to end in a real browser: Tests/Browser/board_browser_test.py drives
/// Debian's headless Chromium (chromium-driver, Selenium from scripts/install-test-python)
/// against the built `healthgate demo --participants 8`: tiles appear and change, a silent strap
/// is flagged, the screenshot shows every tile in its colour, the page reconnects after a
/// gateway restart, the history shows the charts, and a board with a token refuses requests
/// without it.
final class BoardBrowserTests: XCTestCase {
    func testTheBoardInHeadlessChromium() async throws {
        guard let screenshot = try await runInChromium("board_browser_test.py", output: "board.png") else { return }
        let png = try Data(contentsOf: screenshot)
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "the screenshot is a PNG")
        if let keep = ProcessInfo.processInfo.environment["HEALTHGATE_BOARD_SCREENSHOT"] {
            try png.write(to: URL(fileURLWithPath: keep))
        }
    }

    /// The board for a class on a 1920 × 1080 screen: Tests/Browser/board_layout_test.py renders
    /// 10, 20 and 30 tiles (made from the demo's real tiles) through the page's own script and
    /// checks from the element boxes that every tile is on the screen, none overlap, every text
    /// fits its tile, heart rates are large, the order holds and a lost strap shows a dash. The
    /// pictures it takes are the ones in docs/board-10.png, -20 and -30 (run it with `docs` as
    /// its OUTDIR to renew them).
    func testTheBoardForAClassOnA1080pScreen() async throws {
        guard let pictures = try await runInChromium("board_layout_test.py", output: "layout", checks: 24) else { return }
        for count in [10, 20, 30] {
            let png = try Data(contentsOf: pictures.appendingPathComponent("board-\(count).png"))
            XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "board-\(count).png is a PNG")
        }
    }

    /// Signing in from the board: Tests/Browser/board_sign_in_test.py runs `healthgate demo
    /// --participants 6 --new-straps 3`, checks the new-strap tiles (identity, radio, heart rate,
    /// a "Sign in" button; nothing overlapping or clipped), takes the picture kept in
    /// docs/board-sign-in.png (run it with `docs` as its OUTDIR to renew it), and signs a strap
    /// in through the page's form.
    func testSigningInFromTheBoardInHeadlessChromium() async throws {
        guard let pictures = try await runInChromium("board_sign_in_test.py", output: "sign-in", checks: 9) else { return }
        let png = try Data(contentsOf: pictures.appendingPathComponent("board-sign-in.png"))
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "board-sign-in.png is a PNG")
    }

    /// Runs Tests/Browser/SCRIPT with the built executable and OUTPUT (a path in the run's own
    /// directory, returned) and checks that every check passed (`checks` of them, when given).
    /// Nil, and a failure, when Chromium or its driver is missing.
    func runInChromium(_ script: String, output: String, checks: Int? = nil) async throws -> URL? {
        let executable = try HealthgateExecutable()
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            XCTFail("\(tool) is missing: run scripts/install-dependencies --test")
            return nil
        }
        let path = executable.root.appendingPathComponent(output)
        let result = try await TestPython.run("Tests/Browser/\(script)", [executable.url.path, path.path])
        let text = result.output + result.errors
        XCTAssertEqual(result.status, 0, text)
        XCTAssertTrue(text.contains((checks.map(String.init) ?? "") + " passed, 0 failed"), text)
        XCTAssertFalse(text.contains("FAIL"), text)
        return path
    }
}

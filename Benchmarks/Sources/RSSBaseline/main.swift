import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

// The memory benchmark's baseline: the smallest long-running Swift program that uses
// FoundationEssentials the way healthgate does (dates, JSON, a file), then idles. Built the same
// way (release, static Swift standard library), so the ratio shows what healthgate itself adds.
//
// The file is written in a directory of its own (mkdtemp), and both are removed before it idles:
// FileManager writes atomically, renaming a temporary file over the destination, so any path
// outside its own directory (/dev/null run as root) would be replaced by a regular file. The
// benchmark stops the baseline with SIGKILL, so nothing is left to remove at exit.

/// Stops with status 1 and the reason on stderr: a baseline that did not do its work would
/// make the benchmark's ratio meaningless (the benchmark fails when the baseline has exited).
func fail(_ reason: String) -> Never {
    _ = "rss-baseline: \(reason)\n".withCString { write(STDERR_FILENO, $0, strlen($0)) }
    exit(1)
}

let data: Data
do {
    data = try JSONEncoder().encode(["started": Date().timeIntervalSince1970])
} catch {
    fail("cannot encode the start date: \(error)")
}
let temporary = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
var template = Array("\(temporary)/rss-baseline.XXXXXX".utf8CString)
let made = template.withUnsafeMutableBufferPointer { buffer -> UnsafeMutablePointer<CChar>? in
    buffer.baseAddress.flatMap { mkdtemp($0) }
}
guard let made else {
    fail("mkdtemp in \(temporary): \(String(cString: strerror(errno)))")
}
let directory = String(cString: made)
let file = directory + "/started.json"
let written = FileManager.default.createFile(atPath: file, contents: data)
unlink(file)
rmdir(directory)
if !written { fail("cannot write \(file)") }
_ = "ready\n".withCString { write(STDOUT_FILENO, $0, strlen($0)) }
while true { sleep(3600) }

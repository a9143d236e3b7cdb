import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

// The memory benchmark's baseline: the smallest long-running Swift program that uses
// FoundationEssentials the way healthgate does (dates, JSON, a file), then idles. Built the same
// way (release, static Swift standard library), so the ratio shows what healthgate itself adds.
let encoder = JSONEncoder()
let data = (try? encoder.encode(["started": Date().timeIntervalSince1970])) ?? Data()
_ = FileManager.default.createFile(atPath: "/dev/null", contents: data)
_ = "ready\n".withCString { write(STDOUT_FILENO, $0, strlen($0)) }
while true { sleep(3600) }

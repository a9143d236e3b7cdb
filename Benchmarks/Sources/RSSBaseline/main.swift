import Foundation

// The memory benchmark's baseline: the smallest long-running Swift program that loads Foundation
// the way healthgate does (dates, JSON, a file), then idles. Built the same way (release, static
// Swift standard library), so the ratio shows what healthgate itself adds.
let encoder = JSONEncoder()
let data = (try? encoder.encode(["started": Date().timeIntervalSince1970])) ?? Data()
_ = FileManager.default.createFile(atPath: "/dev/null", contents: data)
FileHandle.standardOutput.write(Data("ready\n".utf8))
while true { sleep(3600) }

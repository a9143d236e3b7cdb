public import Foundation
import XCTest

/// A private CA, a server certificate for 127.0.0.1 and a client certificate, generated with
/// `openssl` in a directory (PEM files, unencrypted keys).
public struct TestCertificates: Sendable {
    public let directory: URL
    public var ca: URL { directory.appendingPathComponent("ca.pem") }
    public var serverCertificate: URL { directory.appendingPathComponent("server.pem") }
    public var serverKey: URL { directory.appendingPathComponent("server.key") }
    /// Its subject's common name is ``clientName``, which a broker with
    /// `use_identity_as_username` takes as the user name.
    public var clientCertificate: URL { directory.appendingPathComponent("client.pem") }
    public var clientKey: URL { directory.appendingPathComponent("client.key") }
    public static let clientName = "gateway-certificate"

    /// Generates a CA (`ca`), and a server and a client certificate it signs, in `directory`;
    /// `prefix` names the files, so that two CAs fit in one directory.
    public init(directory: URL, prefix: String = "") throws {
        let folder = directory.appendingPathComponent("\(prefix)certificates")
        self.directory = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        try Self.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=healthgate test CA",
                          "-keyout", path("ca.key"), "-out", ca.path])
        // The broker's name is its address: libmosquitto checks it against the subjectAltName.
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        try "extendedKeyUsage=clientAuth\n".write(toFile: path("client.ext"), atomically: true, encoding: .utf8)
        for (name, subject) in [("server", "/CN=127.0.0.1"), ("client", "/CN=\(Self.clientName)")] {
            try Self.openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", subject,
                              "-keyout", path("\(name).key"), "-out", path("\(name).csr")])
            try Self.openssl(["x509", "-req", "-in", path("\(name).csr"), "-CA", ca.path, "-CAkey", path("ca.key"),
                              "-CAcreateserial", "-days", "2", "-extfile", path("\(name).ext"), "-out", path("\(name).pem")])
        }
    }

    private static func openssl(_ arguments: [String]) throws {
        let result = try runProcessOutput(URL(fileURLWithPath: "/usr/bin/openssl"), arguments)
        guard result.status == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(result.output)")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes a `mosquitto_passwd` file with one user.
    public static func passwordFile(at url: URL, user: String, password: String) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
        process.arguments = ["-b", url.path, user, password]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "mosquitto_passwd -b")
    }
}

import FoundationEssentials
import GatewayRuntime

/// A secret that could not be read. Names where it was looked for, never the secret itself.
public struct CredentialError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// Reads the bearer token or basic-auth password when a request is built, so that fixing a
/// token file takes effect without a restart. The secret only ever goes into the Authorization
/// header: it is never logged and never part of an error.
struct Credentials: Sendable {
    let auth: HTTPRepositoryConfiguration.Auth
    let variables: [String: String]

    /// Where the secret comes from, for messages: "the token file /etc/healthgate/token".
    var source: String {
        switch auth.type {
        case .none: "no credentials (auth.type is none)"
        case .bearer:
            auth.tokenFile.map { "the token file \($0)" }
                ?? "the environment variable \(auth.tokenVariable ?? "?")"
        case .basic:
            auth.passwordFile.map { "the password file \($0) (user \(auth.username ?? "?"))" }
                ?? "the environment variable \(auth.passwordVariable ?? "?") (user \(auth.username ?? "?"))"
        }
    }

    /// The Authorization header value, or nil without auth.
    func authorization() throws(CredentialError) -> String? {
        switch auth.type {
        case .none:
            return nil
        case .bearer:
            return "Bearer " + (try secret(file: auth.tokenFile, variable: auth.tokenVariable, what: "token"))
        case .basic:
            let password = try secret(file: auth.passwordFile, variable: auth.passwordVariable, what: "password")
            let pair = Data("\(auth.username ?? ""):\(password)".utf8)
            return "Basic " + pair.base64EncodedString()
        }
    }

    private func secret(file: String?, variable: String?, what: String) throws(CredentialError) -> String {
        if let file {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw CredentialError(description: "cannot read the \(what) file \(file): \(ErrorText.of(error))")
            }
            let text = String(decoding: data, as: UTF8.self).trimmed()
            guard !text.isEmpty else { throw CredentialError(description: "the \(what) file \(file) is empty") }
            guard !text.contains(where: { $0.isNewline }) else {
                throw CredentialError(description: "the \(what) file \(file) holds more than one line")
            }
            return text
        }
        let name = variable ?? ""
        guard let value = variables[name]?.trimmed(), !value.isEmpty else {
            throw CredentialError(description: "the environment variable \(name) that should hold the \(what) is not set or empty")
        }
        return value
    }
}

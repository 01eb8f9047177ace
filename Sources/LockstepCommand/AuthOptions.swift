import ArgumentParser
import Foundation
import LockstepServer

/// The shared secret, shared by `serve` and `token`: given inline or, better, in a file (not in `ps`).
struct AuthOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "HS256 secret (at least 32 bytes): every connection then needs a token (see '\(Lockstep.name) token').",
            valueName: "secret"
        ))
    var authSecret: String?

    @Option(
        help: ArgumentHelp(
            "File holding the auth secret (trailing newline ignored); keeps it out of the process list.",
            valueName: "path"
        ))
    var authSecretFile: String?

    var isSet: Bool { authSecret != nil || authSecretFile != nil }

    func validate() throws {
        if authSecret != nil, authSecretFile != nil {
            throw ValidationError("give --auth-secret or --auth-secret-file, not both")
        }
    }

    /// The secret's bytes, or nil when neither option was given.
    func secret() throws(AuthOptionsError) -> [UInt8]? {
        if let authSecret { return Array(authSecret.utf8) }
        guard let authSecretFile else { return nil }
        let contents: Data
        do {
            contents = try Data(contentsOf: URL(fileURLWithPath: authSecretFile))
        } catch {
            throw .unreadable(path: authSecretFile, reason: (error as NSError).localizedDescription)
        }
        var bytes = Array(contents)
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .empty(path: authSecretFile) }
        return bytes
    }

    /// The token authority for the configured secret, or nil without one.
    func authority() async throws -> TokenAuthority? {
        guard let secret = try secret() else { return nil }
        return try await TokenAuthority(secret: secret)
    }
}

/// Why the secret could not be read; printed as is before the process exits.
enum AuthOptionsError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case empty(path: String)

    var description: String {
        switch self {
        case .unreadable(let path, let reason):
            "cannot read --auth-secret-file \(path): \(reason)"
        case .empty(let path):
            "--auth-secret-file \(path) is empty; put the secret in it (e.g. head -c 32 /dev/urandom | base64 > \(path))"
        }
    }
}

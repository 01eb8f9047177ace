import ArgumentParser
import Foundation
import LockstepServer

/// `lockstep token`: prints an access token for a server started with the same secret.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print an access token (HS256 JWT) for one room, or every room with --room '*'."
    )

    @Option(help: "The room the token opens, or * for every room.")
    var room: String

    @Option(help: "read (receives everything, may not change the room) or write.")
    var role: AccessRole

    @Option(help: "How long the token is valid: 30s, 15m, 1h, 7d (bare numbers are seconds).")
    var ttl = Duration.seconds(3_600)

    @Option(help: "Who the token is issued to (its sub claim): shown in every change it makes, and to reducers.")
    var sub: String?

    @OptionGroup var auth: AuthOptions

    func validate() throws {
        guard auth.isSet else {
            throw ValidationError("give the server's secret with --auth-secret-file PATH (or --auth-secret SECRET)")
        }
        guard ttl > .zero else { throw ValidationError("--ttl must be positive") }
    }

    func run() async throws {
        guard let authority = try await auth.authority() else { return }
        let token = try await authority.issue(room: room, role: role, lifetime: ttl, subject: sub)
        FileHandle.standardOutput.write(Data((token + "\n").utf8))
    }
}

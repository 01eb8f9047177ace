import ArgumentParser
import LockstepLoad
import LockstepServer

/// `lockstep load`'s options for what part of the room each client follows and which part each action changes: the
/// generator's `LoadLayout`, with tokens minted from the secret. `LoadPlan.validate()` checks them, first.
struct LayoutOptions: ParsableArguments {
    @Option(
        help: """
            Views: client i follows ?path=/p<i mod N> (but the last --room-clients), and json action k of writer \
            w changes /p<(w+k) mod N>/n. 0: every client follows the whole room.
            """)
    var paths = 0

    @Option(help: "With --paths: how many clients (the last ones) follow the whole room instead of a view.")
    var roomClients = 0

    @Option(
        help: """
            A JSON Pointer ending in {sub}, e.g. /hands/{sub}: before timing, every client creates its own \
            subtree there ({"n":0}; its sub is c<i>). Needs the secret, to mint each client's token.
            """)
    var privatePart: String?

    @Flag(help: "With --private-part: writers change <their subtree>/n instead of the public /n.")
    var ownWrites = false

    @OptionGroup(title: "Tokens (a write token for every room, sub c<i>, minted per client)")
    var auth: AuthOptions

    /// The layout these options describe; with a secret, each client's token is a write token for every room.
    var layout: LoadLayout {
        let auth = auth
        let mintTokens: @Sendable ([String]) async throws -> [String] = { subjects in
            let authority = try await auth.authority()!
            var tokens: [String] = []
            tokens.reserveCapacity(subjects.count)
            for subject in subjects {
                tokens.append(
                    try await authority.issue(room: "*", role: .write, lifetime: .seconds(86_400), subject: subject))
            }
            return tokens
        }
        return LoadLayout(
            paths: paths, roomClients: roomClients, privatePart: privatePart, ownWrites: ownWrites,
            mintTokens: auth.isSet ? mintTokens : nil)
    }
}

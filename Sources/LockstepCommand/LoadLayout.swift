import ArgumentParser
import Dispatch
import LockstepServer
import Synchronization

/// What part of the room each `lockstep load` client follows and which part each action changes: the whole room
/// (the default), views (`--paths`), or private parts (`--private-part`, with tokens minted per client).
struct LoadLayout: ParsableArguments {
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

    func validate() throws {
        guard paths >= 0, roomClients >= 0 else { throw ValidationError("--paths and --room-clients must be >= 0") }
        if roomClients > 0, paths == 0 { throw ValidationError("--room-clients needs --paths") }
        if let privatePart {
            guard privatePart.hasPrefix("/"), privatePart.hasSuffix("/{sub}"), privatePart.count > 6 else {
                throw ValidationError("--private-part must be a JSON Pointer ending in /{sub}, e.g. /hands/{sub}")
            }
            guard auth.isSet else {
                throw ValidationError("--private-part needs --auth-secret-file (the server's secret) to mint tokens")
            }
        }
        if ownWrites, privatePart == nil { throw ValidationError("--own-writes needs --private-part") }
    }

    /// Checks what depends on `lockstep load`'s own options.
    func validate(app: String, clients: Int) throws {
        if paths > 0 || privatePart != nil {
            guard app == "json" else { throw ValidationError("--paths and --private-part need --app json") }
        }
        guard roomClients <= clients else { throw ValidationError("--room-clients must be at most --clients") }
    }

    /// Whether every client sees every version, so any skip is a gap.
    var everyVersionReachesEveryone: Bool { paths == 0 && privatePart == nil }

    /// The view client `client` follows, or nil for the whole room.
    func view(client: Int, clients: Int) -> Int? {
        paths > 0 && client < clients - roomClients ? client % paths : nil
    }

    /// The room URL client `client` opens.
    func url(_ base: String, client: Int, clients: Int) -> String {
        guard let view = view(client: client, clients: clients) else { return base }
        return base + (base.contains("?") ? "&" : "?") + "path=/p\(view)"
    }

    static func subject(client: Int) -> String { "c\(client)" }

    /// The pointer action `sequence` of `writer` changes, and who sees the change.
    func target(writer: Int, sequence: Int) -> (path: String, audience: LoadAudience) {
        if ownWrites, let privatePart {
            return (ownSubtree(privatePart, client: writer) + "/n", .owner(writer))
        }
        if paths > 0 {
            let view = (writer + sequence) % paths
            return ("/p\(view)/n", .view(view))
        }
        return ("/n", .everyone)
    }

    /// The action client 0 sends before timing (the views' parents, the private parts' parent), if any.
    var firstSetupAction: String? {
        var ops = (0..<paths).map { #"{"op":"add","path":"/p\#($0)","value":{}}"# }
        if let privatePart {
            ops.append(#"{"op":"add","path":"\#(privatePart.dropLast(6))","value":{}}"#)
        }
        return ops.isEmpty ? nil : #"{"type":"patch","ops":[\#(ops.joined(separator: ","))]}"#
    }

    /// The action client `client` sends after the first, to create its own private subtree, if any.
    func ownSetupAction(client: Int) -> String? {
        privatePart.map {
            #"{"type":"patch","ops":[{"op":"add","path":"\#(ownSubtree($0, client: client))","value":{"n":0}}]}"#
        }
    }

    private func ownSubtree(_ pattern: String, client: Int) -> String {
        pattern.replacing("{sub}", with: Self.subject(client: client))
    }

    /// One `Authorization` header per client (a write token for every room, sub `c<i>`), or nil without a secret.
    /// Blocks the calling thread (the command's main thread, never a pool thread) while the tokens are signed.
    func headers(clients: Int) throws -> [[String: String]]? {
        guard auth.isSet else { return nil }
        let result = Mutex<Result<[[String: String]], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let auth = auth
        Task.detached {
            do {
                let authority = try await auth.authority()!
                var headers: [[String: String]] = []
                headers.reserveCapacity(clients)
                for client in 0..<clients {
                    let token = try await authority.issue(
                        room: "*", role: .write, lifetime: .seconds(86_400), subject: Self.subject(client: client))
                    headers.append(["Authorization": "Bearer " + token])
                }
                result.withLock { $0 = .success(headers) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}

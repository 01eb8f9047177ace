import Dispatch
import Synchronization

/// What part of the room each client follows and which part each action changes: the whole room (the default),
/// views (`paths`), or private parts (`privatePart`, with a token minted per client).
public struct LoadLayout: Sendable {
    /// Views: client i follows `?path=/p<i mod N>` (but the last `roomClients`), and json action k of writer w
    /// changes `/p<(w+k) mod N>/n`. 0: every client follows the whole room.
    public var paths: Int
    /// With `paths`: how many clients (the last ones) follow the whole room instead of a view.
    public var roomClients: Int
    /// A JSON Pointer ending in `{sub}`, e.g. `/hands/{sub}`: before timing, every client creates its own subtree
    /// there (`{"n":0}`; its sub is `c<i>`). Needs `mintTokens`.
    public var privatePart: String?
    /// With `privatePart`: writers change `<their subtree>/n` instead of the public `/n`.
    public var ownWrites: Bool
    /// Mints one token per subject (`c<i>` for client i), each allowed to write to every room, in the same order.
    /// nil: clients connect without a token. Called once per process, before the clients connect.
    public var mintTokens: (@Sendable (_ subjects: [String]) async throws -> [String])?

    /// A layout; by default every client follows the whole room.
    public init(
        paths: Int = 0, roomClients: Int = 0, privatePart: String? = nil, ownWrites: Bool = false,
        mintTokens: (@Sendable (_ subjects: [String]) async throws -> [String])? = nil
    ) {
        self.paths = paths
        self.roomClients = roomClients
        self.privatePart = privatePart
        self.ownWrites = ownWrites
        self.mintTokens = mintTokens
    }

    /// Checks the layout's own settings against each other; the error names the `lockstep load` option at fault.
    public func validate() throws(LoadPlanError) {
        guard paths >= 0, roomClients >= 0 else { throw LoadPlanError("--paths and --room-clients must be >= 0") }
        if roomClients > 0, paths == 0 { throw LoadPlanError("--room-clients needs --paths") }
        if let privatePart {
            guard privatePart.hasPrefix("/"), privatePart.hasSuffix("/{sub}"), privatePart.count > 6 else {
                throw LoadPlanError("--private-part must be a JSON Pointer ending in /{sub}, e.g. /hands/{sub}")
            }
            guard mintTokens != nil else {
                throw LoadPlanError("--private-part needs --auth-secret-file (the server's secret) to mint tokens")
            }
        }
        if ownWrites, privatePart == nil { throw LoadPlanError("--own-writes needs --private-part") }
    }

    /// Checks what depends on the plan's other settings.
    func validate(app: String, clients: Int) throws(LoadPlanError) {
        if paths > 0 || privatePart != nil {
            guard app == "json" else { throw LoadPlanError("--paths and --private-part need --app json") }
        }
        guard roomClients <= clients else { throw LoadPlanError("--room-clients must be at most --clients") }
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

    /// One `Authorization` header per client, or nil without `mintTokens`. Blocks the calling thread (the run's,
    /// never a pool thread) while the tokens are minted.
    func headers(clients: Int) throws(LoadError) -> [[String: String]]? {
        try headers(subjects: (0..<clients).map { Self.subject(client: $0) })
    }

    /// The subject of HTTP writer `writer`'s token (`--scenario http`), told apart from the clients'.
    static func subject(httpWriter writer: Int) -> String { "h\(writer)" }

    /// One `Authorization` header per subject, or nil without `mintTokens`. Blocks the calling thread.
    func headers(subjects: [String]) throws(LoadError) -> [[String: String]]? {
        guard let mintTokens else { return nil }
        let clients = subjects.count
        let result = Mutex<Result<[[String: String]], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let tokens = try await mintTokens(subjects)
                guard tokens.count == clients else {
                    throw LoadError.transport("\(tokens.count) tokens minted for \(clients) subjects")
                }
                result.withLock { $0 = .success(tokens.map { ["Authorization": "Bearer " + $0] }) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        do {
            return try result.withLock { $0! }.get()
        } catch {
            throw .tokens(error)
        }
    }
}

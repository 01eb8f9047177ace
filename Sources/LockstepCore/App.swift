public import LockstepJSON

/// A reducer under a name, so a server can be told which one its rooms run (`--app NAME`).
public struct App: Sendable {
    /// The name clients and the command line use.
    public let name: String
    /// One line for `--help`.
    public let summary: String
    /// The parts of its rooms that only their owner sees, such as `/hands/{sub}`.
    public let privateParts: PrivateParts
    /// The version of its state's shape, and how stored states of older versions are brought up to it.
    public let evolution: StateEvolution
    /// The app's own actions for a client joining and leaving its room (nil: none), as JSON; applied through the
    /// reducer as that client's changes, with `cause.kind` `join` and `leave`.
    public let membership: Membership
    /// Who may use global undo, redo and revert in its rooms; the server's `--history-role` may only make it stricter.
    public let historyRole: HistoryRole
    /// Builds a store; throws the decoding error's words when `state` is not a state of the reducer.
    private let make: @Sendable (_ state: JSON?, _ version: Int, _ history: History) throws(StoreError) -> any RoomStore

    /// An app whose rooms run `reducer`.
    ///
    /// When a new version of the app changes its `State` so that stored rooms no longer decode, raise `stateVersion`
    /// and add the migration from the version before (see ``Migration``):
    ///
    /// ```swift
    /// App("kanban", summary: "a shared board", reducer: Kanban(), stateVersion: 2, migrations: [
    ///     Migration(from: 1) { state in try state.setMember("archived", to: false) },
    /// ])
    /// ```
    ///
    /// `historyRole: .admin` keeps global undo, redo and revert for `admin` tokens (a referee), leaving `undo mine` to
    /// every writer.
    ///
    /// `joined` and `left` opt in to the app's own actions for a client joining and leaving a room ("deal bob a hand
    /// when he joins", "mark alice away when she leaves"), without trusting a client to send them: each is applied
    /// through the reducer as that client's change, so it is logged, undoable and replayable.
    public init<R: Reducer>(
        _ name: String, summary: String, reducer: R, privateParts: PrivateParts = .none, stateVersion: Int = 1,
        migrations: [Migration] = [], historyRole: HistoryRole = .write,
        joined: (@Sendable (Sender) -> R.Action?)? = nil, left: (@Sendable (Sender) -> R.Action?)? = nil
    ) {
        self.historyRole = historyRole
        self.name = name
        self.summary = summary
        self.privateParts = privateParts
        evolution = StateEvolution(version: stateVersion, migrations: migrations)
        membership = Membership(joined: joined.map(Self.encoding), left: left.map(Self.encoding))
        make = { (state, version, history) throws(StoreError) in
            guard let state else { return Store(reducer: reducer, version: version, history: history) }
            do {
                return Store(
                    reducer: reducer, state: try state.decode(R.State.self), version: version, history: history)
            } catch {
                throw .brokenState(DecodingErrorDescription(error).text)
            }
        }
    }

    /// An app's membership action as JSON for its room.
    private static func encoding<Action: Encodable & Sendable>(
        _ make: @escaping @Sendable (Sender) -> Action?
    ) -> @Sendable (Sender) -> JSON? {
        { sender in make(sender).flatMap { try? JSON(encoding: $0) } }
    }

    /// A new room, at version 0 with the reducer's initial state.
    public func makeStore(undoDepth: Int) -> any RoomStore {
        // A store without a stored state cannot fail to build.
        try! make(nil, 0, History(depth: undoDepth))
    }

    /// A room rebuilt from a stored state of the current state version, its version and history.
    public func restoreStore(state: JSON, version: Int, history: History) throws(StoreError) -> any RoomStore {
        do throws(StoreError) {
            return try make(state, version, history)
        } catch {
            throw .brokenState("a stored state does not decode: \(Self.reason(error))")
        }
    }

    /// A room rebuilt from a state stored under `stateVersion`, its version and history; a state of an older version
    /// is migrated to the current one first, and then starts a new undo history (what was kept describes changes to
    /// the older shape).
    public func loadStore(
        state: JSON, stateVersion: Int, version: Int, history: History
    ) throws(MigrationError) -> any RoomStore {
        let current = stateVersion == evolution.version
        let migrated = current ? state : try evolution.migrate(state, from: stateVersion)
        do throws(StoreError) {
            return try make(migrated, version, current ? history : History(depth: history.depth))
        } catch {
            throw .undecodable(stateVersion: evolution.version, reason: Self.reason(error))
        }
    }

    /// The words of a failed decode, as `make` threw them.
    private static func reason(_ error: StoreError) -> String {
        if case .brokenState(let reason) = error { return reason }
        return error.message
    }
}

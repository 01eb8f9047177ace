public import LockstepJSON

/// A reducer under a name, so a server can be told which one its rooms run (`--app NAME`).
public struct App: Sendable {
    /// The name clients and the command line use.
    public let name: String
    /// One line for `--help`.
    public let summary: String
    /// The parts of its rooms that only their owner sees, such as `/hands/{sub}`.
    public let privateParts: PrivateParts
    private let make: @Sendable (_ state: JSON?, _ version: Int, _ history: History) throws(StoreError) -> any RoomStore

    public init<R: Reducer>(_ name: String, summary: String, reducer: R, privateParts: PrivateParts = .none) {
        self.name = name
        self.summary = summary
        self.privateParts = privateParts
        make = { (state, version, history) throws(StoreError) in
            guard let state else { return Store(reducer: reducer, version: version, history: history) }
            do {
                return Store(
                    reducer: reducer, state: try state.decode(R.State.self), version: version, history: history)
            } catch {
                throw .brokenState("a stored state does not decode: \(DecodingErrorDescription(error).text)")
            }
        }
    }

    /// A new room, at version 0 with the reducer's initial state.
    public func makeStore(undoDepth: Int) -> any RoomStore {
        // A store without a stored state cannot fail to build.
        try! make(nil, 0, History(depth: undoDepth))
    }

    /// A room rebuilt from a stored state, version and history.
    public func restoreStore(state: JSON, version: Int, history: History) throws(StoreError) -> any RoomStore {
        try make(state, version, history)
    }
}

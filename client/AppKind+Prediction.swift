import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON

extension AppKind {
    /// `state` with the pending actions applied by this app's own reducer, as the server will apply them: what the
    /// screen shows while they wait (offline, or on their way). Before any snapshot (`state` null: a kept client
    /// that has not reached its server yet) they apply over the app's initial state.
    func predict(_ state: JSON, pending: [JSON]) -> JSON {
        guard !pending.isEmpty else { return state }
        switch self {
        case .counter: return Self.predict(Counter(), state, pending)
        case .todos: return Self.predict(Todos(), state, pending)
        case .json: return Self.predict(JSONDocument(), state, pending)
        }
    }

    private static func predict<R: Reducer>(_ reducer: R, _ state: JSON, _ pending: [JSON]) -> JSON {
        guard let typed = state == .null ? reducer.initialState : try? state.decode(R.State.self) else { return state }
        return (try? JSON(encoding: SharedStore<R>.predict(pending, over: typed, with: reducer))) ?? state
    }
}

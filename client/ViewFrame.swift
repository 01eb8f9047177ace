import LockstepCore
import LockstepJSON

/// Where the part of the room the client follows (`--path`) sits in the room. Commands name whole-room paths and an
/// app's reducer reads the whole room, so the sessions read, guess the app and predict through a room rebuilt
/// around the view: objects down to the path, the view's value at its end.
struct ViewFrame: Sendable {
    let path: JSONPointer

    /// The smallest room holding `view` at `path`: enough for commands that read paths inside the view.
    func room(holding view: JSON) -> JSON {
        path.tokens.reversed().reduce(view) { inner, token in .object([token: inner]) }
    }

    /// The view's value in `room`; null where the path does not resolve.
    func view(of room: JSON) -> JSON {
        room.value(at: path) ?? .null
    }

    /// `view` with the pending actions applied. For the whole room, by the app's reducer; for a part of it only the
    /// json app's patches are predicted (those inside the view apply to the rebuilt room; an action that writes
    /// elsewhere does not apply there, so it shows when the server's patch arrives). Other apps' reducers need the
    /// whole room: a view of theirs shows the confirmed state.
    func predict(_ view: JSON, app: AppKind, pending: [JSON]) -> JSON {
        guard !path.isRoot else { return app.predict(view, pending: pending) }
        guard app == .json, !pending.isEmpty else { return view }
        return self.view(of: app.predict(room(holding: view), pending: pending))
    }

    /// The app a view's state belongs to, guessed from the rebuilt room.
    func app(forcing forced: AppKind?, view: JSON) -> AppKind {
        forced ?? AppKind(detectingFrom: room(holding: view))
    }
}

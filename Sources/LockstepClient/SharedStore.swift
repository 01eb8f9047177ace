public import LockstepCore
public import LockstepJSON
public import LockstepTransport

/// A room's mirror typed by the server's own reducer, so a Swift app shares `State` and `Action` with the server and
/// the compiler checks every action it sends; optimistic, so the app sees its own actions at once.
///
/// ```swift
/// let todos = try SharedStore(Todos(), url: "ws://127.0.0.1:8080/rooms/demo", name: "alice")
/// try await todos.connect()
/// try await todos.send(.add(title: "milk"))
/// let titles = try await todos.state.items.map(\.title)
/// ```
///
/// `state` is the prediction: the server's confirmed state with the actions still waiting for their ack applied
/// over it by the same reducer, so a send shows before the server answers, even while offline. Each patch from the
/// server moves the confirmed state on and the pending actions are applied again over it (a rebase); an action the
/// server rejects leaves the prediction and its `send` throws. Effects the reducer returns never run here: the
/// server runs them, and their changes arrive as patches. Undo and redo are not predicted: they run on the server
/// only, and show when their patches arrive.
///
/// A store mirrors the whole room, since its reducer needs the whole state to predict. To follow part of a room
/// (`path=`), use ``SharedView``: typed the same way, it shows confirmed state only.
public final class SharedStore<R: Reducer>: TypedRoomClient {
    /// The untyped client underneath: status, peers, history, and the raw update stream.
    public let room: RoomClient
    /// The reducer the server runs, applied here to predict pending actions.
    public let reducer: R

    /// Every change to the mirror (and to the outbox) with its predicted state decoded; a state that does not decode
    /// as `R.State` ends the sequence with ``RoomClientError/coding(_:)``. One consumer, like ``RoomClient/updates``.
    public var updates: AsyncThrowingMapSequence<AsyncStream<RoomUpdate>, TypedUpdate> {
        room.updates.map { [reducer] update in
            let confirmed = try Self.decode(update.state)
            return TypedUpdate(
                update: update, state: Self.predict(update.pendingActions, over: confirmed, with: reducer),
                confirmedState: confirmed)
        }
    }

    /// One update with the mirror's state as the reducer's type.
    public struct TypedUpdate: Sendable {
        /// The update as the untyped client reported it.
        public var update: RoomUpdate
        /// The predicted state right after it: the confirmed state with the pending actions applied.
        public var state: R.State
        /// The server's state at `update.version`.
        public var confirmedState: R.State
        /// True when `state` includes actions the server has not confirmed yet.
        public var isPredicted: Bool { !update.pendingActions.isEmpty }
    }

    /// Prepares a mirror of the room at `url` whose server runs `reducer`; see
    /// ``RoomClient/init(url:path:name:session:outboxLimit:reconnect:transport:)-(_,JSONPointer,_,_,_,_,_)``.
    public init(
        _ reducer: R, url: String, name: String? = nil, session: String? = nil, outboxLimit: Int = 10_000,
        reconnect: ReconnectPolicy = ReconnectPolicy(), transport: WebSocketClient? = nil
    ) throws(RoomClientError) {
        self.reducer = reducer
        room = try RoomClient(
            url: url, name: name, session: session, outboxLimit: outboxLimit, reconnect: reconnect,
            transport: transport)
    }

    /// Connects and waits for the first snapshot, which must decode as `R.State`.
    public func connect() async throws(RoomClientError) {
        try await room.connect()
        _ = try await confirmedState
    }

    /// The predicted state: the confirmed state with every pending action applied over it, in order.
    public var state: R.State {
        get async throws(RoomClientError) {
            let (confirmed, pending) = await room.mirrorAndPending()
            return Self.predict(pending, over: try Self.decode(confirmed), with: reducer)
        }
    }

    /// The state the server confirmed (at ``version``), without pending actions.
    public var confirmedState: R.State {
        get async throws(RoomClientError) { try Self.decode(await room.state) }
    }

    /// True when ``state`` includes actions the server has not confirmed yet.
    public var isPredicted: Bool {
        get async { await !room.pendingActions.isEmpty }
    }

    /// Applies `actions` over `state` with the reducer, skipping one it rejects (the server will reject it too) or
    /// that does not decode; effects are dropped.
    public static func predict(_ actions: [JSON], over state: R.State, with reducer: R) -> R.State {
        var state = state
        for json in actions {
            guard let action = try? json.decode(R.Action.self) else { continue }
            var next = state
            if (try? reducer.reduce(into: &next, action: action)) != nil { state = next }
        }
        return state
    }

    private static func decode(_ json: JSON) throws(RoomClientError) -> R.State {
        do {
            return try json.decode(R.State.self)
        } catch {
            throw .coding("the room's state does not decode as \(R.State.self): \(error)")
        }
    }
}

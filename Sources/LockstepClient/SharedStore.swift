import Foundation
public import LockstepCore
public import LockstepJSON
public import LockstepTransport
public import Logging
public import Observation
import Synchronization

/// A room's mirror typed by the server's own reducer, so a Swift app shares `State` and `Action` with the server and
/// the compiler checks every action it sends; optimistic, so the app sees its own actions at once; observable, so a
/// SwiftUI view (or `withObservationTracking`) redraws on each change.
///
/// ```swift
/// let todos = try SharedStore(Todos(), url: "ws://127.0.0.1:8080/rooms/demo", name: "alice",
///                             keep: "/path/to/app/rooms", isolation: MainActor.shared)
/// try await todos.connect()
/// try await todos.send(.add(title: "milk"))
/// let titles = todos.state.items.map(\.title)
/// ```
///
/// `state` is the prediction: the server's confirmed state with the actions still waiting for their ack applied
/// over it by the same reducer, so a send shows before the server answers, even while offline. Each patch from the
/// server moves the confirmed state on and the pending actions are applied again over it (a rebase); an action the
/// server rejects leaves the prediction and its `send` throws. Effects the reducer returns never run here: the
/// server runs them, and their changes arrive as patches. Undo and redo are not predicted: they run on the server
/// only, and show when their patches arrive.
///
/// `state`, `confirmedState`, `version`, `status`, `peers`, `pendingCount` and `isPredicted` are read synchronously
/// and change on the isolation given as `isolation:` (`MainActor.shared` for a UI: a view body reads them), once per
/// change; with no isolation they change on the client's actor, before the `send` that caused them returns.
///
/// With `keep:` (a directory) the store outlives the app: started again, it shows the kept state with the kept
/// pending actions predicted over it at once, and sends them, each applied once, when the server answers (see
/// ``KeepDirectory``).
///
/// A store mirrors the whole room, since its reducer needs the whole state to predict. To follow part of a room
/// (`path=`), use ``SharedView``: typed the same way, it shows confirmed state only.
public final class SharedStore<R: Reducer>: TypedRoomClient, Observable {
    /// The untyped client underneath: history, undo counts, and the raw update stream.
    public let room: RoomClient
    /// The reducer the server runs, applied here to predict pending actions.
    public let reducer: R

    /// What the store shows, changed all at once on the store's isolation.
    struct Values: Sendable {
        var state: R.State
        var confirmedState: R.State
        var version: Int
        var status: ConnectionStatus
        var peers: [Peer]
        var pendingCount: Int
        var isPredicted: Bool
        var problem: RoomClientError?
        /// Counts changed predictions, so observers of `state` hear of one without comparing states again.
        var generation: Int
        /// Counts confirmed states decoded.
        var confirmedGeneration: Int
    }

    /// What the last prediction was made from, on the client's actor.
    private struct Derivation: Sendable {
        var mirrorGeneration: Int
        var pending: [JSON]
        var values: Values
    }

    private let values: Mutex<Values>
    private let derivation: Mutex<Derivation>
    private let feed: UpdateFeed<Values>
    private let registrar = ObservationRegistrar()

    /// Every change to the mirror (and to the outbox) with its predicted state decoded; a state that does not decode
    /// as `R.State` ends the sequence with ``RoomClientError/coding(_:)``. One consumer, like ``RoomClient/updates``.
    public var updates: AsyncThrowingMapSequence<AsyncStream<RoomUpdate>, TypedUpdate> {
        room.updates.map { [reducer, sender = room.sender] update in
            let confirmed = update.state == .null ? reducer.initialState : try Self.decode(update.state)
            return TypedUpdate(
                update: update, state: Self.predict(update.pendingActions, over: confirmed, with: reducer, as: sender),
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

    /// Prepares a mirror of the room at `url` whose server runs `reducer`.
    ///
    /// - Parameters:
    ///   - reducer: the reducer the server runs, applied here to predict pending actions.
    ///   - url: the room's address, `ws://HOST:PORT/rooms/ROOM` (or `wss://`).
    ///   - name: the display name peers see, as for ``RoomClient``.
    ///   - session: the session name, as for ``RoomClient``.
    ///   - outboxLimit: most change requests waiting for an answer at once.
    ///   - reconnect: how retries back off after a drop.
    ///   - transport: a shared libwebsockets client; the store's client makes its own when nil.
    ///   - keep: a directory where the store keeps its session, outbox and last confirmed state across restarts
    ///     (files are marked with the reducer's type name, so another app's file is set aside, not misread).
    ///   - isolation: where the observable properties change (`MainActor.shared` for a UI); on the client's actor
    ///     when nil.
    ///   - logger: where a kept file set aside, or one that cannot be written, is reported.
    public init(
        _ reducer: R, url: String, name: String? = nil, session: String? = nil, outboxLimit: Int = 10_000,
        reconnect: ReconnectPolicy = ReconnectPolicy(), transport: WebSocketClient? = nil, keep: String? = nil,
        isolation: (any Actor)? = nil, logger: Logger = Logger(label: "lockstep.client")
    ) throws(RoomClientError) {
        self.reducer = reducer
        room = try RoomClient(
            url: url, name: name, session: session, outboxLimit: outboxLimit, reconnect: reconnect,
            transport: transport, keep: keep.map { KeepDirectory($0, app: String(reflecting: R.self)) },
            isolation: nil, logger: logger)
        let mirror = room.mirror
        let confirmed = (try? Self.decode(mirror.state)) ?? reducer.initialState
        let first = Values(
            state: Self.predict(mirror.pendingActions, over: confirmed, with: reducer, as: room.sender),
            confirmedState: confirmed,
            version: mirror.version, status: mirror.status, peers: mirror.peers, pendingCount: mirror.pendingCount,
            isPredicted: !mirror.pendingActions.isEmpty, problem: nil, generation: 0, confirmedGeneration: 0)
        values = Mutex(first)
        derivation = Mutex(Derivation(mirrorGeneration: -1, pending: mirror.pendingActions, values: first))
        feed = UpdateFeed(isolation: isolation)
        feed.start { [weak self] in self?.apply($0) }
        room.watch { [weak self] in self?.mirrorChanged($0) }
    }

    /// Connects and waits for the first snapshot, which must decode as `R.State`. With a keep directory it returns
    /// at once when a kept state shows (see ``RoomClient/connect()``).
    public func connect() async throws(RoomClientError) {
        try await room.connect()
        let state = await room.state
        if state != .null { _ = try Self.decode(state) }
    }

    /// The predicted state: the confirmed state with every pending action applied over it, in order. Before the
    /// first snapshot (offline, nothing kept), the prediction starts from the reducer's `initialState`.
    public var state: R.State { read(\.state) { $0.state } }
    /// The state the server confirmed (at ``version``), without pending actions.
    public var confirmedState: R.State { read(\.confirmedState) { $0.confirmedState } }
    /// The version of the confirmed state.
    public var version: Int { read(\.version) { $0.version } }
    /// Where the connection stands.
    public var status: ConnectionStatus { read(\.status) { $0.status } }
    /// Who is in the room, in join order.
    public var peers: [Peer] { read(\.peers) { $0.peers } }
    /// Requests waiting for the server's answer, kept ones included.
    public var pendingCount: Int { read(\.pendingCount) { $0.pendingCount } }
    /// True when ``state`` includes actions the server has not confirmed yet.
    public var isPredicted: Bool { read(\.isPredicted) { $0.isPredicted } }
    /// Set when the room's state stopped decoding as `R.State` (client and server types disagree); `state` then
    /// stays at the last one that decoded.
    public var problem: RoomClientError? { read(\.problem) { $0.problem } }

    /// Applies `actions` over `state` with the reducer, as `sender` (the client's own: ``RoomClient/sender``),
    /// skipping one it rejects or that does not decode; effects are dropped.
    ///
    /// A reducer that reads its context sees the sender the server will see (name, session, the token's subject and
    /// role), so a rule such as "only the player whose turn it is" predicts what the server then confirms. What the
    /// client cannot know differs: the time is the client's clock, and the version and random source are not the
    /// server's, so a prediction that draws random numbers or reads the version is replaced by the server's patch.
    public static func predict(
        _ actions: [JSON], over state: R.State, with reducer: R, as sender: Sender? = nil
    ) -> R.State {
        var state = state
        let context = ReducerContext(sender: sender, time: Int(Date().timeIntervalSince1970 * 1000))
        for json in actions {
            guard let action = try? json.decode(R.Action.self) else { continue }
            var next = state
            if (try? reducer.reduce(into: &next, action: action, context: context)) != nil { state = next }
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

    /// On the client's actor: derives the typed values from the mirror's, decoding and predicting again only when the
    /// state or the pending actions changed.
    private func mirrorChanged(_ mirror: RoomMirror.Values) {
        let next = derivation.withLock { derivation in
            var values = derivation.values
            let stateChanged = mirror.stateGeneration != derivation.mirrorGeneration
            if stateChanged {
                derivation.mirrorGeneration = mirror.stateGeneration
                if mirror.state != .null {
                    do throws(RoomClientError) {
                        values.confirmedState = try Self.decode(mirror.state)
                        values.confirmedGeneration += 1
                        values.problem = nil
                    } catch {
                        values.problem = error
                    }
                }
            }
            if stateChanged || mirror.pendingActions != derivation.pending {
                derivation.pending = mirror.pendingActions
                let predicted = Self.predict(
                    mirror.pendingActions, over: values.confirmedState, with: reducer, as: room.sender)
                if predicted != values.state {
                    values.state = predicted
                    values.generation += 1
                }
            }
            values.version = mirror.version
            values.status = mirror.status
            values.peers = mirror.peers
            values.pendingCount = mirror.pendingCount
            values.isPredicted = !mirror.pendingActions.isEmpty
            derivation.values = values
            return values
        }
        feed.send(next)
    }

    private func read<T>(_ keyPath: KeyPath<SharedStore, T>, _ value: (Values) -> T) -> T {
        registrar.access(self, keyPath: keyPath)
        return values.withLock { value($0) }
    }

    /// On the store's isolation: moves to `new`, telling observers of each property that changed, and only those.
    private func apply(_ new: Values) {
        let old = values.withLock { $0 }
        if old.generation != new.generation { change(\.state) { $0.state = new.state } }
        if old.confirmedGeneration != new.confirmedGeneration {
            change(\.confirmedState) { $0.confirmedState = new.confirmedState }
        }
        if old.version != new.version { change(\.version) { $0.version = new.version } }
        if old.status != new.status { change(\.status) { $0.status = new.status } }
        if old.peers != new.peers { change(\.peers) { $0.peers = new.peers } }
        if old.pendingCount != new.pendingCount { change(\.pendingCount) { $0.pendingCount = new.pendingCount } }
        if old.isPredicted != new.isPredicted { change(\.isPredicted) { $0.isPredicted = new.isPredicted } }
        if old.problem != new.problem { change(\.problem) { $0.problem = new.problem } }
        values.withLock {
            $0.generation = new.generation
            $0.confirmedGeneration = new.confirmedGeneration
        }
    }

    private func change<T>(_ keyPath: KeyPath<SharedStore, T>, _ body: (inout Values) -> Void) {
        registrar.withMutation(of: self, keyPath: keyPath) { values.withLock { body(&$0) } }
    }
}

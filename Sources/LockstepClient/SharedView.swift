public import LockstepCore
import LockstepJSON
public import LockstepTransport
public import Logging
public import Observation
import Synchronization

/// Part of a room, typed: `Value` is what lives at `path`, actions are those of the reducer `R` the server runs.
///
/// ```swift
/// let item = try SharedView(Todos.self, at: "/items/0", as: Todos.Item.self, url: "ws://127.0.0.1:8080/rooms/demo")
/// try await item.connect()
/// try await item.send(.toggle(id: 1))
/// let done = item.state?.done
/// ```
///
/// A view shows confirmed state only, never a prediction: the reducer's state is the whole room, which a view does
/// not hold, so pending actions cannot be applied over it. A send returns once the server acknowledged it, with its
/// patch already applied if it touched the view; ``pendingCount`` tells an app that sends are on their way. Like
/// ``SharedStore`` it is observable, changes on the isolation given as `isolation:`, and with `keep:` outlives the
/// app.
public final class SharedView<R: Reducer, Value: Decodable & Sendable>: TypedRoomClient, Observable {
    /// The untyped client underneath, following `path`.
    public let room: RoomClient

    /// What the view shows, changed all at once on its isolation.
    struct Values: Sendable {
        var state: Value?
        var version: Int
        var status: ConnectionStatus
        var pendingCount: Int
        var problem: RoomClientError?
        var generation: Int
    }

    private let values: Mutex<Values>
    /// The mirror's state generation last decoded, on the client's actor.
    private let decoded = Mutex((generation: -1, values: Values?.none))
    private let feed: UpdateFeed<Values>
    private let registrar = ObservationRegistrar()

    /// Prepares a typed view of the part of the room at `path` (JSON Pointer text); see ``RoomClient`` for `name`,
    /// `session`, `outboxLimit`, `reconnect` and `transport`, and ``SharedStore`` for `keep`, `isolation` and `logger`.
    public init(
        _ reducer: R.Type, at path: String, as value: Value.Type, url: String, name: String? = nil,
        session: String? = nil, outboxLimit: Int = 10_000, reconnect: ReconnectPolicy = ReconnectPolicy(),
        transport: WebSocketClient? = nil, keep: String? = nil, isolation: (any Actor)? = nil,
        logger: Logger = Logger(label: "lockstep.client")
    ) throws(RoomClientError) {
        room = try RoomClient(
            url: url, path: path, name: name, session: session, outboxLimit: outboxLimit, reconnect: reconnect,
            transport: transport, keep: keep.map { KeepDirectory($0, app: String(reflecting: R.self)) },
            isolation: nil, logger: logger)
        let mirror = room.mirror
        let first = Values(
            state: try? Self.decode(mirror.state), version: mirror.version, status: mirror.status,
            pendingCount: mirror.pendingCount, problem: nil, generation: 0)
        values = Mutex(first)
        decoded.withLock { $0.values = first }
        feed = UpdateFeed(isolation: isolation)
        feed.start { [weak self] in self?.apply($0) }
        room.watch { [weak self] in self?.mirrorChanged($0) }
    }

    /// One update with the view's value decoded.
    public struct TypedUpdate: Sendable {
        /// The update as the untyped client reported it.
        public var update: RoomUpdate
        /// The view's value right after it; nil while nothing is at the path.
        public var state: Value?
    }

    /// Every change to the view with its value decoded; a value that does not decode as `Value` ends the sequence
    /// with ``RoomClientError/coding(_:)``. One consumer, like ``RoomClient/updates``.
    public var updates: AsyncThrowingMapSequence<AsyncStream<RoomUpdate>, TypedUpdate> {
        room.updates.map { update in TypedUpdate(update: update, state: try Self.decode(update.state)) }
    }

    /// Connects and waits for the first snapshot, whose value must decode as `Value` (or be null).
    public func connect() async throws(RoomClientError) {
        try await room.connect()
        _ = try Self.decode(await room.state)
    }

    /// The value at the path as the server confirmed it; nil while nothing is there.
    public var state: Value? { read(\.state) { $0.state } }
    /// The version of the confirmed state.
    public var version: Int { read(\.version) { $0.version } }
    /// Where the connection stands.
    public var status: ConnectionStatus { read(\.status) { $0.status } }
    /// Requests waiting for the server's answer, kept ones included.
    public var pendingCount: Int { read(\.pendingCount) { $0.pendingCount } }
    /// Set when the value stopped decoding as `Value`; `state` then stays at the last one that decoded.
    public var problem: RoomClientError? { read(\.problem) { $0.problem } }

    private static func decode(_ json: JSON) throws(RoomClientError) -> Value? {
        guard json != .null else { return nil }
        do {
            return try json.decode(Value.self)
        } catch {
            throw .coding("the value at the view's path does not decode as \(Value.self): \(error)")
        }
    }

    private func mirrorChanged(_ mirror: RoomMirror.Values) {
        let next = decoded.withLock { decoded -> Values in
            var values = decoded.values!
            if mirror.stateGeneration != decoded.generation {
                decoded.generation = mirror.stateGeneration
                do throws(RoomClientError) {
                    values.state = try Self.decode(mirror.state)
                    values.problem = nil
                    values.generation += 1
                } catch {
                    values.problem = error
                }
            }
            values.version = mirror.version
            values.status = mirror.status
            values.pendingCount = mirror.pendingCount
            decoded.values = values
            return values
        }
        feed.send(next)
    }

    private func read<T>(_ keyPath: KeyPath<SharedView, T>, _ value: (Values) -> T) -> T {
        registrar.access(self, keyPath: keyPath)
        return values.withLock { value($0) }
    }

    private func apply(_ new: Values) {
        let old = values.withLock { $0 }
        if old.generation != new.generation { change(\.state) { $0.state = new.state } }
        if old.version != new.version { change(\.version) { $0.version = new.version } }
        if old.status != new.status { change(\.status) { $0.status = new.status } }
        if old.pendingCount != new.pendingCount { change(\.pendingCount) { $0.pendingCount = new.pendingCount } }
        if old.problem != new.problem { change(\.problem) { $0.problem = new.problem } }
        values.withLock { $0.generation = new.generation }
    }

    private func change<T>(_ keyPath: KeyPath<SharedView, T>, _ body: (inout Values) -> Void) {
        registrar.withMutation(of: self, keyPath: keyPath) { values.withLock { body(&$0) } }
    }
}

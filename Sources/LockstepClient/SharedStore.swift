public import LockstepCore
import LockstepJSON
public import LockstepTransport

/// A room's mirror typed by the server's own reducer, so a Swift app shares `State` and `Action` with the server and
/// the compiler checks every action it sends.
///
/// ```swift
/// let todos = try SharedStore(Todos.self, url: "ws://127.0.0.1:8080/rooms/demo", name: "alice")
/// try await todos.connect()
/// try await todos.send(.add(title: "milk"))
/// let titles = try await todos.state.items.map(\.title)
/// ```
///
/// The reducer never runs here: the server is the authority, this only decodes what it sends.
public final class SharedStore<R: Reducer>: Sendable {
    /// The untyped client underneath: status, peers, history, and the raw update stream.
    public let room: RoomClient

    /// Every change to the mirror with its state decoded; a state that does not decode as `R.State` ends the
    /// sequence with ``RoomClientError/coding(_:)``. One consumer, like ``RoomClient/updates``.
    public var updates: AsyncThrowingMapSequence<AsyncStream<RoomUpdate>, TypedUpdate> {
        room.updates.map { update in
            TypedUpdate(update: update, state: try Self.decode(update.state))
        }
    }

    /// One update with the mirror's state as the reducer's type.
    public struct TypedUpdate: Sendable {
        /// The update as the untyped client reported it.
        public var update: RoomUpdate
        /// The state right after it.
        public var state: R.State
    }

    /// Prepares a mirror of the room at `url` whose server runs `R`; see ``RoomClient/init(url:name:reconnect:transport:)``.
    public init(
        _ reducer: R.Type = R.self, url: String, name: String? = nil,
        reconnect: ReconnectPolicy = ReconnectPolicy(), transport: WebSocketClient? = nil
    ) throws(RoomClientError) {
        room = try RoomClient(url: url, name: name, reconnect: reconnect, transport: transport)
    }

    /// Connects and waits for the first snapshot, which must decode as `R.State`.
    public func connect() async throws(RoomClientError) {
        try await room.connect()
        _ = try await state
    }

    /// Ends the connection.
    public func close() async { await room.close() }

    /// The mirrored state, decoded.
    public var state: R.State {
        get async throws(RoomClientError) { try Self.decode(await room.state) }
    }

    /// The version of the mirrored state.
    public var version: Int {
        get async { await room.version }
    }

    /// Sends a typed action; returns the version the room reached (already mirrored when this returns).
    @discardableResult
    public func send(_ action: R.Action) async throws(RoomClientError) -> Int {
        let json: JSON
        do {
            json = try JSON(encoding: action)
        } catch {
            throw .coding("\(R.Action.self) does not encode: \(error)")
        }
        return try await room.send(action: json)
    }

    /// Reverts the room's most recent change, whoever made it.
    @discardableResult
    public func undo() async throws(RoomClientError) -> Int { try await room.undo() }

    /// Re-applies the most recently undone change.
    @discardableResult
    public func redo() async throws(RoomClientError) -> Int { try await room.redo() }

    private static func decode(_ json: JSON) throws(RoomClientError) -> R.State {
        do {
            return try json.decode(R.State.self)
        } catch {
            throw .coding("the room's state does not decode as \(R.State.self): \(error)")
        }
    }
}

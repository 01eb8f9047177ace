public import LockstepCore
import LockstepJSON
public import LockstepTransport

/// Part of a room, typed: `Value` is what lives at `path`, actions are those of the reducer `R` the server runs.
///
/// ```swift
/// let item = try SharedView(Todos.self, at: "/items/0", as: Todos.Item.self, url: "ws://127.0.0.1:8080/rooms/demo")
/// try await item.connect()
/// try await item.send(.toggle(id: 1))
/// let done = try await item.state?.done
/// ```
///
/// A view shows confirmed state only, never a prediction: the reducer's state is the whole room, which a view does
/// not hold, so pending actions cannot be applied over it. A send returns once the server acknowledged it, with its
/// patch already applied if it touched the view; ``TypedRoomClient/pendingCount`` tells an app that sends are on
/// their way.
public final class SharedView<R: Reducer, Value: Decodable & Sendable>: TypedRoomClient {
    /// The untyped client underneath, following `path`.
    public let room: RoomClient

    /// Prepares a typed view of the part of the room at `path` (JSON Pointer text); see
    /// ``RoomClient/init(url:path:name:session:outboxLimit:reconnect:transport:)-(_,String,_,_,_,_,_)``.
    public init(
        _ reducer: R.Type, at path: String, as value: Value.Type, url: String, name: String? = nil,
        session: String? = nil, outboxLimit: Int = 10_000, reconnect: ReconnectPolicy = ReconnectPolicy(),
        transport: WebSocketClient? = nil
    ) throws(RoomClientError) {
        room = try RoomClient(
            url: url, path: path, name: name, session: session, outboxLimit: outboxLimit, reconnect: reconnect,
            transport: transport)
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
        _ = try await state
    }

    /// The value at the path as the server confirmed it; nil while nothing is there.
    public var state: Value? {
        get async throws(RoomClientError) { try Self.decode(await room.state) }
    }

    private static func decode(_ json: JSON) throws(RoomClientError) -> Value? {
        guard json != .null else { return nil }
        do {
            return try json.decode(Value.self)
        } catch {
            throw .coding("the value at the view's path does not decode as \(Value.self): \(error)")
        }
    }
}

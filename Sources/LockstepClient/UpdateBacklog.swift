import Synchronization

/// The stream behind ``RoomClient/updates``: every update from the moment it is first asked for, and before that
/// only the newest ``RoomClient/unreadUpdatesLimit``, which the stream starts with. A client whose app shows only
/// ``RoomClient/mirror`` (a ``SharedStore`` in a view) then keeps a few updates, not every change the room ever had,
/// and an app that asks for `updates` right after `connect()` still misses none.
final class UpdateBacklog: Sendable {
    private struct State {
        /// The newest updates not read yet, as a ring: the oldest at `start` once it is full.
        var kept: [RoomUpdate] = []
        var start = 0
        /// The client closed before anyone asked for the stream.
        var finished = false
        /// The stream and its continuation, once asked for.
        var stream: AsyncStream<RoomUpdate>?
        var continuation: AsyncStream<RoomUpdate>.Continuation?
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = max(limit, 1)
    }

    /// The updates; the first call starts it with those kept. One consumer.
    var stream: AsyncStream<RoomUpdate> {
        state.withLock { state in
            if let stream = state.stream { return stream }
            let (stream, continuation) = AsyncStream.makeStream(of: RoomUpdate.self)
            let count = state.kept.count
            for index in 0..<count { continuation.yield(state.kept[(state.start + index) % count]) }
            if state.finished { continuation.finish() }
            state.kept = []
            state.stream = stream
            state.continuation = continuation
            return stream
        }
    }

    func yield(_ update: RoomUpdate) {
        state.withLock { state in
            if let continuation = state.continuation {
                continuation.yield(update)
                return
            }
            guard !state.finished else { return }
            if state.kept.count < limit {
                state.kept.append(update)
            } else {
                state.kept[state.start] = update
                state.start = (state.start + 1) % limit
            }
        }
    }

    /// The client closed: the stream ends after what it holds.
    func finish() {
        state.withLock { state in
            if let continuation = state.continuation { return continuation.finish() }
            state.finished = true
        }
    }
}

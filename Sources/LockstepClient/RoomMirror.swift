public import LockstepCore
public import LockstepJSON
public import Observation
import Synchronization

/// What a ``RoomClient`` shows, readable synchronously from any thread and observable (`withObservationTracking`,
/// a SwiftUI view): it changes on the isolation given to the client (`isolation: MainActor.shared` for a UI), once
/// per change of the room, so a view body reads it without awaiting the client's actor.
///
/// ```swift
/// let room = try RoomClient(url: url, isolation: MainActor.shared)
/// Text("\(room.mirror.version) · \(room.mirror.status.description)")
/// ```
public final class RoomMirror: Observable, Sendable {
    /// One picture of the client, taken on its actor.
    struct Values: Sendable, Equatable {
        var state: JSON = .null
        var version = 0
        var status: ConnectionStatus = .connecting(failures: 0)
        var peers: [Peer] = []
        var pendingCount = 0
        var pendingActions: [JSON] = []
        var undoCount = 0
        var redoCount = 0
        /// Counts assignments of `state`, so a change is noticed without comparing large states.
        var stateGeneration = 0
    }

    private let values: Mutex<Values>
    private let registrar = ObservationRegistrar()

    init(_ values: Values) {
        self.values = Mutex(values)
    }

    /// The mirrored state (the value at the client's path); `.null` before the first snapshot.
    public var state: JSON { read(\.state) { $0.state } }
    /// The version of `state`.
    public var version: Int { read(\.version) { $0.version } }
    /// Where the connection stands.
    public var status: ConnectionStatus { read(\.status) { $0.status } }
    /// Who is in the room, in join order.
    public var peers: [Peer] { read(\.peers) { $0.peers } }
    /// Change requests not yet answered, kept ones included.
    public var pendingCount: Int { read(\.pendingCount) { $0.pendingCount } }
    /// The actions not yet in `state`, in order: apply them over it to predict the room's next state.
    public var pendingActions: [JSON] { read(\.pendingActions) { $0.pendingActions } }
    /// How many changes the room can undo now.
    public var undoCount: Int { read(\.undoCount) { $0.undoCount } }
    /// How many changes the room can redo now.
    public var redoCount: Int { read(\.redoCount) { $0.redoCount } }

    private func read<T>(_ keyPath: KeyPath<RoomMirror, T>, _ value: (Values) -> T) -> T {
        registrar.access(self, keyPath: keyPath)
        return values.withLock { value($0) }
    }

    /// Moves to `new`, telling observers of each property that changed, and only those.
    func apply(_ new: Values) {
        let old = values.withLock { $0 }
        if old.stateGeneration != new.stateGeneration { change(\.state) { $0.state = new.state } }
        if old.version != new.version { change(\.version) { $0.version = new.version } }
        if old.status != new.status { change(\.status) { $0.status = new.status } }
        if old.peers != new.peers { change(\.peers) { $0.peers = new.peers } }
        if old.pendingCount != new.pendingCount { change(\.pendingCount) { $0.pendingCount = new.pendingCount } }
        if old.pendingActions != new.pendingActions {
            change(\.pendingActions) { $0.pendingActions = new.pendingActions }
        }
        if old.undoCount != new.undoCount { change(\.undoCount) { $0.undoCount = new.undoCount } }
        if old.redoCount != new.redoCount { change(\.redoCount) { $0.redoCount = new.redoCount } }
        values.withLock { $0.stateGeneration = new.stateGeneration }
    }

    private func change<T>(_ keyPath: KeyPath<RoomMirror, T>, _ body: (inout Values) -> Void) {
        registrar.withMutation(of: self, keyPath: keyPath) { values.withLock { body(&$0) } }
    }
}

import LockstepCore
import LockstepJSON
@testable import LockstepServer

/// One simulated client of one room, with a session: what it has (its mirror), what it has sent and not seen
/// answered, and the highest `seq` and version it saw acknowledged, which no later answer may go behind. It sees the
/// whole room, or a view of it (`?path=`, private parts as its token's subject sees them).
final class SimulatedClient {
    struct Mirror {
        var state: JSON
        var version: Int
        var undo: Int
        var redo: Int
    }

    /// A request or read sent on the current connection and not answered yet; `after` is the highest version the
    /// client saw acknowledged when it sent it.
    struct Outstanding {
        let id: String
        let after: Int
    }

    let index: Int
    let session: String
    let room: String
    /// What it sees of the room, chosen once, as the server chooses it from its `path=` and token.
    let sight: any RoomSight
    var nextSeq = 1
    /// How many requests it sent with an idempotency key instead of a `seq`.
    var keyed = 0
    var reads = 0
    /// How many presence states it set; the last is its state.
    var presenceStates = 0
    var unacked: [SimulatedRequest] = []
    /// Requests answered `unavailable` on this connection: still unacked, they go out again with their `seq`.
    var refused: [String] = []
    /// Requests with a key told they may be stored: a later `unavailable` says only that that attempt applied nothing.
    var mayBeStored: Set<String> = []
    var connection: Int?
    var joined = false
    var mirror: Mirror?
    var outstanding: [Outstanding] = []
    var ackedSeq = 0
    var ackedVersion = 0

    init(index: Int, room: String, sight: any RoomSight) {
        self.index = index
        self.session = "s\(index)"
        self.room = room
        self.sight = sight
    }

    /// The view it follows, if it does not see the whole room.
    var view: RoomView? { sight as? RoomView }

    /// What it sees, for the trace.
    var seeing: String {
        guard let view else { return "the room" }
        return "\(view.path.path.isRoot ? "/" : "\(view.path.path)") as \(view.reader ?? "no one")"
    }
}

import LockstepJSON

/// One simulated client of one room, with a session: what it has (its mirror), what it has sent and not seen
/// answered, and the highest `seq` and version it saw acknowledged, which no later answer may go behind.
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
    var nextSeq = 1
    /// How many requests it sent with an idempotency key instead of a `seq`.
    var keyed = 0
    var reads = 0
    /// How many presence states it set; the last is its state.
    var presenceStates = 0
    var unacked: [SimulatedRequest] = []
    /// Requests answered `unavailable` on this connection: still unacked, they go out again with their `seq`.
    var refused: [String] = []
    var connection: Int?
    var joined = false
    var mirror: Mirror?
    var outstanding: [Outstanding] = []
    var ackedSeq = 0
    var ackedVersion = 0

    init(index: Int, room: String) {
        self.index = index
        self.session = "s\(index)"
        self.room = room
    }
}

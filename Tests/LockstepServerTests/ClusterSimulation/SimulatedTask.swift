import LockstepCore

/// Something that will happen in the simulated cluster once the scheduler picks it: a message's delivery, a task a
/// server started, a database call's progress. Picked in any order, which is how delays and reordering come about;
/// messages on one connection still arrive in order, since each delivery takes that connection's first one.
enum SimulatedTask: CustomStringConvertible {
    case toServer(connection: Int)
    case toClient(connection: Int)
    /// A server handles a handshake (again, when its catch-up was deferred).
    case join(connection: Int)
    case pump(server: Int, incarnation: Int, room: Int, name: String)
    /// A transaction takes its room's lock and calls `prepare`.
    case lock(transaction: Int)
    case commit(transaction: Int)
    /// A catch-up's read reaches the database, and later its result the server.
    case read(Int)
    case readDone(Int)
    case retryDue(server: Int, incarnation: Int, room: Int, name: String)
    /// A server with a log of its own starts its next group commit, and the write returns.
    case localWrite(server: Int, incarnation: Int)
    case localWritten(server: Int, incarnation: Int)
    /// After a failed write, a room's timers are read from the log again.
    case timersReread(server: Int, incarnation: Int, room: String, read: Int)
    /// A server reads a room that timers came due in, then hands them to it.
    case timerRoomRead(server: Int, incarnation: Int, room: String)
    /// The committing server's NOTIFY, and its arrival at one listener.
    case notify(server: Int, incarnation: Int, room: String, version: Int)
    case notice(server: Int, incarnation: Int, room: String, version: Int)
    /// The database is back: listeners reconnect and every room checks what it missed.
    case databaseUp
    /// A publication of a room's peers reaches the database; the wait after it ends.
    case publish(server: Int, incarnation: Int, room: String, peers: [Peer])
    case publicationWaited(server: Int, incarnation: Int, room: String)
    /// Another server's publication is heard; a read of the other servers' peers reaches the database, and its
    /// result the server.
    case peersNotice(server: Int, incarnation: Int, room: String)
    case peersRead(server: Int, incarnation: Int, room: Int, name: String)
    case peersReadDone(server: Int, incarnation: Int, room: Int, name: String, peers: [Peer]?)

    var description: String {
        switch self {
        case .toServer(let connection): "deliver to server on connection \(connection)"
        case .toClient(let connection): "deliver to client on connection \(connection)"
        case .join(let connection): "join of connection \(connection)"
        case .pump(let server, _, let room, let name): "pump of \(name)#\(room) on server \(server)"
        case .lock(let transaction): "transaction \(transaction) locks"
        case .commit(let transaction): "transaction \(transaction) commits"
        case .read(let id): "catch-up \(id) reads"
        case .readDone(let id): "catch-up \(id) returns"
        case .retryDue(let server, _, let room, let name): "catch-up retry of \(name)#\(room) on server \(server)"
        case .localWrite(let server, _): "server \(server) starts writing its log"
        case .localWritten(let server, _): "server \(server)'s write returns"
        case .timersReread(let server, _, let room, _): "server \(server) reads the timers of \(room) again"
        case .timerRoomRead(let server, _, let room): "server \(server) reads \(room) for its timers"
        case .notify(let server, _, let room, let version): "server \(server) notifies \(room)@\(version)"
        case .notice(let server, _, let room, let version): "server \(server) hears \(room)@\(version)"
        case .databaseUp: "the database is back"
        case .publish(let server, _, let room, let peers): "server \(server) publishes \(room)'s \(peers.count) peers"
        case .publicationWaited(let server, _, let room): "server \(server)'s wait after publishing #\(room) ends"
        case .peersNotice(let server, _, let room): "server \(server) hears of \(room)'s peers"
        case .peersRead(let server, _, let room, let name): "server \(server) reads the peers of \(name)#\(room)"
        case .peersReadDone(let server, _, let room, let name, _):
            "server \(server)'s read of the peers of \(name)#\(room) returns"
        }
    }
}

import LockstepCore

/// How one room in memory reads the other servers' clients from the shared database, decided with no I/O: one read
/// at a time, and read again when a notice came during a read, since that read may have missed what was just
/// published. (This server's own clients go out through ``PresencePublication``.)
///
/// ``SharedLogPipeline`` carries out what it decides; the cluster simulation drives the same type.
struct PresenceExchange {
    /// What a read of the other servers' clients changed.
    enum RemoteChange: Equatable {
        case nothing
        /// A client joined or left: the whole presence goes out.
        case membership
        /// Only these clients' states changed.
        case states([String])
    }

    /// The other servers' clients as last read.
    private(set) var remote: [Peer] = []
    private(set) var reading = false
    /// A notice came while reading: the read is made again.
    private var stale = false

    /// Other servers may have published: whether to start a read now (false while one runs, which reads again).
    mutating func readRequested() -> Bool {
        guard !reading else {
            stale = true
            return false
        }
        reading = true
        stale = false
        return true
    }

    /// A read returned the other servers' clients (nil: it failed). Returns what changed, and whether to read again.
    mutating func read(_ peers: [Peer]?) -> (change: RemoteChange, again: Bool) {
        guard reading else { return (.nothing, false) }
        guard let peers else {
            // The next notice, the periodic renewal or the database's return reads them.
            reading = false
            stale = false
            return (.nothing, false)
        }
        let change = Self.change(from: remote, to: peers)
        remote = peers
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.staleReadNotRepeated) { stale = false }
        #endif
        if stale {
            stale = false
            return (change, true)
        }
        reading = false
        return (change, false)
    }

    private static func change(from old: [Peer], to new: [Peer]) -> RemoteChange {
        guard new != old else { return .nothing }
        guard withoutStates(new) == withoutStates(old) else { return .membership }
        return .states(zip(old, new).filter { $0.state != $1.state }.map(\.1.client))
    }

    /// Who the peers are, leaving out what they are doing.
    private static func withoutStates(_ peers: [Peer]) -> [Peer] {
        peers.map { Peer(client: $0.client, name: $0.name, subject: $0.subject) }
    }
}
